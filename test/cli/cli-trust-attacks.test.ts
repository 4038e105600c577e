import * as NodeFs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, runCli } from "../support/cli-helpers.ts"
import { call, markerExtensions, markerScript, pidsOf, type World, world } from "../support/config-world.ts"

/**
 * `abhed-ext trust` and `run` against a hostile repository: what trust shows is what would run, and the store that
 * decides it is the user's alone (test/host/trust-attacks.test.ts holds the fingerprint's side).
 */

const project = (w: World, extra: object = {}) => {
  NodeFs.mkdirSync(join(w.repo, ".abhed"), { recursive: true })
  NodeFs.writeFileSync(join(w.repo, ".abhed", "repo.sh"), markerScript("repo"))
  NodeFs.writeFileSync(w.project, JSON.stringify({ extensions: markerExtensions(w, ["repo"], extra) }))
}
const run = (w: World) => runCli(["run"], { cwd: join(w.repo, "src"), env: w.env, input: call })
const reasons = (stdout: string): ReadonlyArray<string> =>
  jsonLines(stdout)
    .flatMap((l) => (l as { reasons?: ReadonlyArray<{ reason: string }> }).reasons ?? [])
    .map((r) => r.reason)
const store = (w: World) => join(w.root, "config", "abhed", "trust.json")

describe("abhed-ext trust against a hostile repository", () => {
  it("shows the env values and env_passthrough, which change what runs and what it is handed", async () => {
    const w = world("abhed-trust-show-")
    project(w, { env: { MARKER: w.marker("repo"), NODE_OPTIONS: "--require ./hook.cjs" }, env_passthrough: ["*"] })
    const shown = await runCli(["trust"], { cwd: w.repo, env: w.env })
    expect(shown.code).toBe(1)
    expect(shown.stdout).toContain('NODE_OPTIONS="--require ./hook.cjs"')
    expect(shown.stdout).toMatch(/passes\s+\["\*"\] from your environment/u)
    // The loader variable's file is shown with the scripts (missing here: creating it later is a change).
    expect(shown.stdout).toMatch(/hook\.cjs\s+\(missing\)/u)
  })

  it("BASH_ENV naming a file bash sources before the script: editing it after trust makes the project untrusted", async () => {
    const w = world("abhed-trust-bashenv-")
    project(w, { env: { MARKER: w.marker("repo"), BASH_ENV: "./hook.sh" } })
    NodeFs.writeFileSync(join(w.repo, ".abhed", "hook.sh"), "true\n")
    expect((await runCli(["trust", "--yes"], { cwd: w.repo, env: w.env })).code).toBe(0)
    expect(reasons((await run(w)).stdout)).toEqual(["repo says no"])
    // Sourced by bash before repo.sh runs: it would run with the project's trust, unasked.
    NodeFs.writeFileSync(join(w.repo, ".abhed", "hook.sh"), `echo hooked >> ${JSON.stringify(w.marker("hook"))}\n`)
    const after = await run(w)
    expect(reasons(after.stdout)).toEqual([])
    expect(after.stderr).toContain("script .abhed/hook.sh changed")
    expect(pidsOf(w, "repo")).toHaveLength(1)
    expect(NodeFs.existsSync(w.marker("hook"))).toBe(false)
  })

  it("a script whose name hides invisible characters (tags, a soft hyphen, a filler) is shown with them escaped", async () => {
    const w = world("abhed-trust-invisible-")
    project(w)
    // Beside the guard.sh the user would open, a file that looks the same on a terminal: it is the one that runs.
    const hidden = ["guard.sh\u{e0065}\u{e0076}", "gu\u00adard.sh", "guard\u3164.sh"]
    for (const name of hidden) NodeFs.writeFileSync(join(w.repo, ".abhed", name), "echo evil\n")
    NodeFs.writeFileSync(
      w.project,
      JSON.stringify({ extensions: hidden.map((name, i) => ({ name: `x${i}`, command: "bash", args: [name] })) })
    )
    const shown = await runCli(["trust"], { cwd: w.repo, env: w.env })
    expect(shown.code).toBe(1)
    for (const escaped of ["guard.sh\\u{e0065}\\u{e0076}", "gu\\u00adard.sh", "guard\\u3164.sh"]) {
      expect(shown.stdout).toContain(escaped)
    }
    expect(shown.stdout).not.toMatch(/[\u00ad\u3164]|[\u{e0000}-\u{e007f}]/u)
  })

  it("a store others can write to trusts nothing, and says why", async () => {
    const w = world("abhed-trust-store-")
    project(w)
    expect((await runCli(["trust", "--yes"], { cwd: w.repo, env: w.env })).code).toBe(0)
    expect(reasons((await run(w)).stdout)).toEqual(["repo says no"])
    NodeFs.chmodSync(store(w), 0o622)
    const writable = await run(w)
    expect(reasons(writable.stdout)).toEqual([])
    expect(writable.stderr).toContain("is not trusted")
    expect(writable.stderr).toMatch(/trust store .*writable by others/u)
    expect(pidsOf(w, "repo")).toHaveLength(1)
    // Nor is it written over (its other entries are not to be believed): the user fixes it, then it trusts again.
    const again = await runCli(["trust", "--yes"], { cwd: w.repo, env: w.env })
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/chmod 600/u)
    NodeFs.chmodSync(store(w), 0o600)
    expect(reasons((await run(w)).stdout)).toEqual(["repo says no"])
  })

  it("a store in a folder others can write to trusts nothing", async () => {
    const w = world("abhed-trust-folder-")
    project(w)
    expect((await runCli(["trust", "--yes"], { cwd: w.repo, env: w.env })).code).toBe(0)
    NodeFs.chmodSync(join(w.root, "config", "abhed"), 0o777)
    const open = await run(w)
    expect(reasons(open.stdout)).toEqual([])
    expect(open.stderr).toMatch(/writable by others/u)
  })

  it("a relative XDG_CONFIG_HOME (say `.`, the repository) is not where the store is read from", async () => {
    const w = world("abhed-trust-relative-")
    project(w)
    // A store the repository ships, trusting itself: what `.` would find from `src/`.
    const src = join(w.repo, "src")
    expect((await runCli(["trust", "--yes"], { cwd: src, env: { ...w.env, XDG_CONFIG_HOME: src } })).code).toBe(0)
    const planted = join(src, "abhed", "trust.json")
    expect(NodeFs.existsSync(planted)).toBe(true)
    const result = await runCli(["run"], {
      cwd: join(w.repo, "src"),
      env: { ...w.env, XDG_CONFIG_HOME: "." },
      input: call
    })
    expect(result.stderr).toContain("is not trusted")
    expect(result.stderr).not.toContain(planted)
    expect(pidsOf(w, "repo")).toEqual([])
  })
})
