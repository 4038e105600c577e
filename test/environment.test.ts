import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, repoRoot, runCli } from "./cli-helpers.ts"

/**
 * docs/design.md#environment, through the real CLI and real processes: an extension gets the baseline (PATH, HOME,
 * USER, LOGNAME, SHELL, LANG, LC_*, TERM, TMPDIR, TZ), its own `env`, and what its `env_passthrough` names;
 * nothing else of the host's environment.
 */

const dump = `${repoRoot}test/fixtures/env-dump.sh`

const hostEnv = {
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  AWS_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE",
  AWS_REGION: "eu-west-1",
  ANTHROPIC_API_KEY: "sk-ant-secret",
  GITHUB_TOKEN: "ghp_secret",
  LC_TIME: "C",
  TZ: "Europe/Paris",
  ABHED_SOMETHING_ELSE: "x"
}

const envOf = (system: unknown, name: string): Record<string, string> => {
  const text = typeof system === "string" ? system : ""
  // The appended texts are joined in name order, separated by a blank line: one JSON object each.
  const part = text.split("\n\n").find((p) => p.includes(`"ABHED_EXT":"${name}"`))
  if (part === undefined) throw new Error(`no environment from ${name} in ${text.slice(0, 200)}`)
  return JSON.parse(part) as Record<string, string>
}

describe("the environment an extension gets (docs/design.md#failures)", () => {
  it("the baseline, its env and its env_passthrough; never the host's keys", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-env-"))
    const config = join(dir, "abhed.json")
    const extension = (name: string, extra: object) => ({
      name,
      command: "bash",
      args: [dump],
      events: ["before_agent_start"],
      ...extra
    })
    writeFileSync(config, JSON.stringify({
      extensions: [
        extension("plain", { env: { ABHED_EXT: "plain" } }),
        extension("passing", { env: { ABHED_EXT: "passing", HOME: "/from-config" }, env_passthrough: ["GITHUB_TOKEN", "AWS_R*"] })
      ]
    }))
    const r = await runCli(["run", "--config", config], {
      input: `{"event":"before_agent_start","system":""}\n`,
      env: hostEnv
    })
    expect(r.code, r.stderr).toBe(0)
    const [out] = jsonLines(r.stdout) as Array<{ readonly system?: unknown }>
    const plain = envOf(out?.system, "plain")
    const passing = envOf(out?.system, "passing")

    for (const env of [plain, passing]) {
      // API keys and credentials stay with the agent.
      expect(env["AWS_SECRET_ACCESS_KEY"]).toBeUndefined()
      expect(env["AWS_ACCESS_KEY_ID"]).toBeUndefined()
      expect(env["ANTHROPIC_API_KEY"]).toBeUndefined()
      expect(env["ABHED_SOMETHING_ELSE"]).toBeUndefined()
      // The baseline.
      expect(env["PATH"]).toBe(process.env["PATH"])
      expect(env["LC_TIME"]).toBe("C")
      expect(env["TZ"]).toBe("Europe/Paris")
    }
    expect(plain["HOME"]).toBe(process.env["HOME"])
    expect(plain["GITHUB_TOKEN"]).toBeUndefined()
    expect(plain["AWS_REGION"]).toBeUndefined()
    // What env_passthrough names (a name and a glob), and its own env, which wins over the baseline.
    expect(passing["GITHUB_TOKEN"]).toBe("ghp_secret")
    expect(passing["AWS_REGION"]).toBe("eu-west-1")
    expect(passing["HOME"]).toBe("/from-config")
  }, 30_000)
})
