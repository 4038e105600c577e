import { AuditLog, ExtensionHost } from "@abhed/host"
import { extensionConfig, parseConfig } from "@abhed/protocol"
import { Effect, Layer, Logger, Result } from "effect"
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"
import { Patient } from "../support/extension-helpers.ts"

/**
 * docs/design.md#environment, through the real CLI and real processes: an extension gets the baseline (PATH, HOME, USER,
 * LOGNAME, SHELL, TERM, TMPDIR, TZ and the locale variables by name), its own `env`, and what its
 * `env_passthrough` names; nothing else of the host's environment. A pattern that passes secrets is warned about.
 */

const dump = `${repoRoot}test/fixtures/env-dump.sh`

const hostEnv = {
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  AWS_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE",
  AWS_REGION: "eu-west-1",
  ANTHROPIC_API_KEY: "sk-ant-secret",
  GITHUB_TOKEN: "ghp_secret",
  LC_TIME: "C",
  LC_SECRET: "lc-secret",
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
    writeFileSync(
      config,
      JSON.stringify({
        extensions: [
          extension("plain", { env: { ABHED_EXT: "plain" } }),
          extension("passing", {
            env: { ABHED_EXT: "passing", HOME: "/from-config" },
            env_passthrough: ["GITHUB_TOKEN", "AWS_R*"]
          })
        ]
      })
    )
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
      // The locale variables are passed by name: not every LC_ name is a locale.
      expect(env["LC_SECRET"]).toBeUndefined()
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

  it("run warns on stderr about env_passthrough patterns that pass secrets, and passes them as asked", async () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-env-"))
    const config = join(dir, "abhed.json")
    const extension = (name: string, env_passthrough: Array<string>) => ({
      name,
      command: "bash",
      args: [dump],
      events: ["before_agent_start"],
      env: { ABHED_EXT: name },
      env_passthrough
    })
    writeFileSync(
      config,
      JSON.stringify({
        extensions: [
          extension("everything", ["*"]),
          extension("aws", ["AWS_*"]),
          extension("named", ["GITHUB_TOKEN", "AWS_R*"])
        ]
      })
    )
    const r = await runCli(["run", "--config", config], {
      input: `{"event":"before_agent_start","system":""}\n`,
      env: hostEnv
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain(
      'extension everything: env_passthrough "*" passes every variable of the host, API keys and credentials included'
    )
    expect(r.stderr).toContain(
      'extension aws: env_passthrough "AWS_*" passes secrets such as AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY'
    )
    expect(r.stderr).not.toContain("extension named:")
    // A warning, not a refusal: the operator asked for these.
    const [out] = jsonLines(r.stdout) as Array<{ readonly system?: unknown }>
    expect(envOf(out?.system, "everything")["ANTHROPIC_API_KEY"]).toBe("sk-ant-secret")
    expect(envOf(out?.system, "aws")["AWS_SECRET_ACCESS_KEY"]).toBe(hostEnv.AWS_SECRET_ACCESS_KEY)
  }, 30_000)

  it("an embedder's logger gets the same warning when the host layer is built", async () => {
    const logged: Array<{ readonly level: string; readonly message: string }> = []
    const capture = Logger.make((options) => {
      const message = Array.isArray(options.message) ? options.message.join(" ") : String(options.message)
      logged.push({ level: options.logLevel, message })
    })
    const parsed = parseConfig(
      JSON.stringify({
        extensions: [
          {
            ...extensionConfig({ name: "everything", command: "bash", args: [dump], env_passthrough: ["*"] }),
            ...Patient
          }
        ]
      })
    )
    if (Result.isFailure(parsed)) throw new Error(String(parsed.failure))
    const host = ExtensionHost.layer(parsed.success, { sessionId: "s-env", baseDir: repoRoot }).pipe(
      Layer.provide(AuditLog.layerNone)
    )
    await Effect.runPromise(Effect.provide(Effect.void, host).pipe(Effect.provide(Logger.layer([capture]))))
    expect(logged).toContainEqual({
      level: "Warn",
      message:
        'extension everything: env_passthrough "*" passes every variable of the host, API keys and credentials included: name the ones it needs'
    })
  }, 30_000)
})

describe("a bash extension and the operator's ~/.bashrc", () => {
  it("is not sourced by bash -c: the extension's stdin is a socket pair, which bash without SHLVL takes for sshd's", async () => {
    const home = mkdtempSync(join(tmpdir(), "abhed-bashrc-"))
    // A .bashrc that prints (on stdout: the extension would die of unsolicited output) and leaves a marker.
    writeFileSync(join(home, ".bashrc"), `echo "bashrc says hello"\ntouch ${JSON.stringify(join(home, "sourced"))}\n`)
    const config = join(home, "abhed.json")
    writeFileSync(
      config,
      JSON.stringify({
        // `bash -c`, as `ssh host command` runs it, and as hook commands and one-line extensions are run.
        extensions: [
          {
            name: "plain",
            command: "bash",
            args: ["-c", `exec bash ${JSON.stringify(dump)}`],
            events: ["before_agent_start"],
            env: { ABHED_EXT: "plain" }
          }
        ]
      })
    )
    const r = await runCli(["run", "--config", config], {
      input: `{"event":"before_agent_start","system":""}\n`,
      env: { HOME: home, SHLVL: "" }
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).not.toContain("dead")
    const [out] = jsonLines(r.stdout) as Array<{ readonly system?: unknown }>
    expect(envOf(out?.system, "plain")["SHLVL"]).toBeDefined()
    expect(existsSync(join(home, "sourced"))).toBe(false)
  }, 60_000)
})
