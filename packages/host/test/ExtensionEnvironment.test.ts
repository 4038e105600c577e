import { extensionConfig } from "@abhed/protocol"
import { describe, expect, it } from "@effect/vitest"
import { environmentFor, nameMatcher } from "../src/ExtensionEnvironment.ts"

describe("ExtensionEnvironment (docs/design.md#failures)", () => {
  const host = {
    PATH: "/bin",
    HOME: "/home/dev",
    LC_ALL: "C",
    LANG: "en_US.UTF-8",
    AWS_SECRET_ACCESS_KEY: "s",
    AWS_REGION: "eu-west-1",
    ANTHROPIC_API_KEY: "k",
    GITHUB_TOKEN: "t",
    NOT_SET: undefined
  }
  const config = (over: { env?: Record<string, string>; env_passthrough?: Array<string> }) =>
    extensionConfig({ name: "x", command: "x", ...over })

  it("the baseline only, by default", () => {
    expect(environmentFor(config({}), host)).toEqual({ PATH: "/bin", HOME: "/home/dev", LC_ALL: "C", LANG: "en_US.UTF-8" })
  })

  it("what env_passthrough names (a name, a glob), then env, which wins", () => {
    expect(environmentFor(config({ env_passthrough: ["GITHUB_TOKEN", "AWS_R*"], env: { HOME: "/x", K: "V" } }), host)).toEqual({
      PATH: "/bin",
      HOME: "/x",
      LC_ALL: "C",
      LANG: "en_US.UTF-8",
      GITHUB_TOKEN: "t",
      AWS_REGION: "eu-west-1",
      K: "V"
    })
  })

  it("a glob: * is the only special character, and it matches whole names", () => {
    expect(nameMatcher("AWS_*")("AWS_SECRET_ACCESS_KEY")).toBe(true)
    expect(nameMatcher("AWS_*")("MY_AWS_KEY")).toBe(false)
    expect(nameMatcher("A.B")("AxB")).toBe(false)
    expect(nameMatcher("*_TOKEN")("GITHUB_TOKEN")).toBe(true)
    expect(nameMatcher("PATH")("PATHX")).toBe(false)
  })
})
