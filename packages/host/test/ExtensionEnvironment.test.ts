import { extensionConfig } from "@abhed/protocol"
import { describe, expect, it } from "@effect/vitest"
import { environmentFor, KnownSecrets, nameMatcher, passthroughWarnings } from "../src/ExtensionEnvironment.ts"

describe("ExtensionEnvironment (docs/design.md#failures)", () => {
  const host = {
    PATH: "/bin",
    HOME: "/home/dev",
    LC_ALL: "C",
    LANG: "en_US.UTF-8",
    NODE_COMPILE_CACHE: "/home/dev/.cache/node",
    AWS_SECRET_ACCESS_KEY: "s",
    AWS_REGION: "eu-west-1",
    ANTHROPIC_API_KEY: "k",
    GITHUB_TOKEN: "t",
    NOT_SET: undefined
  }
  const config = (over: { env?: Record<string, string>; env_passthrough?: Array<string> }) =>
    extensionConfig({ name: "x", command: "x", ...over })

  it("the baseline only, by default", () => {
    expect(environmentFor(config({}), host)).toEqual({
      SHLVL: "1",
      PATH: "/bin",
      HOME: "/home/dev",
      LC_ALL: "C",
      LANG: "en_US.UTF-8",
      NODE_COMPILE_CACHE: "/home/dev/.cache/node"
    })
  })

  it("what env_passthrough names (a name, a glob), then env, which wins", () => {
    expect(
      environmentFor(config({ env_passthrough: ["GITHUB_TOKEN", "AWS_R*"], env: { HOME: "/x", K: "V" } }), host)
    ).toEqual({
      SHLVL: "1",
      PATH: "/bin",
      HOME: "/x",
      LC_ALL: "C",
      LANG: "en_US.UTF-8",
      NODE_COMPILE_CACHE: "/home/dev/.cache/node",
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

  it("the baseline's locale variables are the real ones, by name: LC_SECRET and the like stay", () => {
    const locale = {
      LANG: "C",
      LANGUAGE: "en",
      LC_ALL: "C",
      LC_CTYPE: "C",
      LC_COLLATE: "C",
      LC_MESSAGES: "C",
      LC_MONETARY: "C",
      LC_NUMERIC: "C",
      LC_TIME: "C",
      LC_ADDRESS: "C",
      LC_IDENTIFICATION: "C",
      LC_MEASUREMENT: "C",
      LC_NAME: "C",
      LC_PAPER: "C",
      LC_TELEPHONE: "C"
    }
    expect(environmentFor(config({}), { ...locale, LC_SECRET: "s", LC_API_TOKEN: "t", LCX: "x" })).toEqual({
      SHLVL: "1",
      ...locale
    })
  })
})

describe("passthroughWarnings", () => {
  const warnings = (env_passthrough: Array<string>, hostNames: Array<string> = []) =>
    passthroughWarnings(extensionConfig({ name: "guard", command: "x", env_passthrough }), hostNames)

  it("`*` (or `**`) passes every variable: a warning that says so", () => {
    expect(warnings(["*"])).toEqual([
      'extension guard: env_passthrough "*" passes every variable of the host, API keys and credentials included: name the ones it needs'
    ])
    expect(warnings(["**"])).toHaveLength(1)
  })

  it("a glob matching a known credential is named with what it passes", () => {
    expect(warnings(["AWS_*"])).toEqual([
      'extension guard: env_passthrough "AWS_*" passes secrets such as AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN: name the variables it needs instead'
    ])
    expect(warnings(["*_TOKEN"])[0]).toMatch(
      /passes secrets such as AWS_SESSION_TOKEN, GH_TOKEN, GITHUB_TOKEN and 3 more:/
    )
    expect(warnings(["*KEY*", "AWS_*"])).toHaveLength(2)
    // The collector's headers are its credential: a hook's `OTEL_*` passes them to the hook's command too.
    expect(warnings(["OTEL_*"])).toEqual([
      'extension guard: env_passthrough "OTEL_*" passes secrets such as OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_LOGS_HEADERS, OTEL_EXPORTER_OTLP_METRICS_HEADERS and 1 more: name the variables it needs instead'
    ])
  })

  it("a glob matching a secret-shaped variable of the host's warns; one matching none does not", () => {
    expect(warnings(["MYAPP_*"], ["MYAPP_MODE", "MYAPP_DB_PASSWORD"])).toEqual([
      'extension guard: env_passthrough "MYAPP_*" passes secrets such as MYAPP_DB_PASSWORD: name the variables it needs instead'
    ])
    expect(warnings(["MYAPP_*", "AWS_R*"], ["MYAPP_MODE", "AWS_REGION", "MYAPP", "KEYBOARD"])).toEqual([])
  })

  it("a name passes exactly what it names, as asked: no warning, even for a credential", () => {
    expect(warnings([...KnownSecrets, "AWS_REGION"])).toEqual([])
  })
})

describe("SHLVL", () => {
  it("is 1 unless given: bash on a socket stdin without it sources ~/.bashrc", () => {
    expect(environmentFor(extensionConfig({ name: "x", command: "bash" }), {})["SHLVL"]).toBe("1")
    expect(environmentFor(extensionConfig({ name: "x", command: "bash", env: { SHLVL: "3" } }), {})["SHLVL"]).toBe("3")
    expect(
      environmentFor(extensionConfig({ name: "x", command: "bash", env_passthrough: ["SHLVL"] }), { SHLVL: "2" })[
        "SHLVL"
      ]
    ).toBe("2")
  })
})
