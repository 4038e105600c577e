import * as NodeFs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, runCli } from "../support/cli-helpers.ts"
import { call, markerExtensions, markerScript, pidsOf, type World, world } from "../support/config-world.ts"
import { exists } from "../support/extension-helpers.ts"

/** Config layers and trust, with real processes, in a world of their own (test/support/config-world.ts). */

/** A layer file with one extension per name, each running its own script next to the file. */
const layer = (w: World, file: string, names: ReadonlyArray<string>, extra: object = {}) => {
  const dir = join(file, "..")
  NodeFs.mkdirSync(dir, { recursive: true })
  for (const name of names) NodeFs.writeFileSync(join(dir, `${name}.sh`), markerScript(name))
  NodeFs.writeFileSync(file, JSON.stringify({ extensions: markerExtensions(w, names), ...extra }))
}

const run = (w: World, args: ReadonlyArray<string> = []) =>
  runCli(["run", ...args], { cwd: join(w.repo, "src"), env: w.env, input: call })
const reasons = (stdout: string): ReadonlyArray<string> =>
  jsonLines(stdout)
    .flatMap((l) => (l as { reasons?: ReadonlyArray<{ reason: string }> }).reasons ?? [])
    .map((r) => r.reason)

describe("abhed-ext trust: a project's extensions run only once trusted, bound to their content", () => {
  it("untrusted: nothing starts; trust --yes: it runs; one byte of its script changed: untrusted again, naming it", async () => {
    const w = world("abhed-trust-")
    layer(w, w.user, ["mine"])
    layer(w, w.project, ["repo"])

    const before = await run(w, ["--strict"])
    expect(pidsOf(w, "repo")).toEqual([])
    expect(before.stderr).toContain(`the project config ${w.project} is not trusted`)
    expect(before.stderr).toContain(`abhed-ext trust ${w.repo}`)
    // The session goes on with the other layers, and --strict fails after every line is decided.
    expect(reasons(before.stdout)).toEqual(["mine says no"])
    expect(before.code).toBe(1)

    // No terminal and no --yes: shown, not trusted.
    const refused = await runCli(["trust"], { cwd: w.repo, env: w.env })
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain(join(w.repo, ".abhed", "repo.sh"))
    expect(refused.stderr).toContain("abhed-ext trust --yes")
    expect(pidsOf(w, "repo")).toEqual([])

    const trusted = await runCli(["trust", "--yes", join(w.repo, "src")], { cwd: w.root, env: w.env })
    expect(trusted.code).toBe(0)
    expect(trusted.stdout).toMatch(/repo\n\s+command\s+"bash"\n\s+args\s+\["repo\.sh"\]/)
    expect(trusted.stdout).toMatch(/scripts\s+\S+repo\.sh\s+sha256:[0-9a-f]{64}/)
    expect(trusted.stdout).toContain("MARKER")
    const store = join(w.root, "config", "abhed", "trust.json")
    expect(NodeFs.statSync(store).mode & 0o777).toBe(0o600)
    expect((await runCli(["trust", "--list"], { cwd: w.root, env: w.env })).stdout).toContain(w.repo)

    const after = await run(w, ["--strict"])
    expect(after.code).toBe(0)
    expect(reasons(after.stdout)).toEqual(["mine says no", "repo says no"])
    expect(pidsOf(w, "repo")).toHaveLength(1)

    NodeFs.appendFileSync(join(w.repo, ".abhed", "repo.sh"), "#")
    const changed = await run(w)
    expect(changed.stderr).toContain("extension repo: script .abhed/repo.sh changed")
    expect(reasons(changed.stdout)).toEqual(["mine says no"])
    expect(pidsOf(w, "repo")).toHaveLength(1)

    await runCli(["trust", "--yes"], { cwd: w.repo, env: w.env })
    const untrusted = await runCli(["untrust"], { cwd: w.repo, env: w.env })
    expect(untrusted.stdout).toContain(`no longer trusted: ${w.repo}`)
    expect((await run(w)).stderr).toContain("never been trusted")
    expect(pidsOf(w, "repo")).toHaveLength(1)

    // Nothing is left running.
    for (const pid of [...pidsOf(w, "repo"), ...pidsOf(w, "mine")]) expect(exists(pid)).toBe(false)
  }, 300_000)

  it("an untrusted project alone: the warning says its layer was not used, not that none was found", async () => {
    const w = world("abhed-trust-alone-")
    layer(w, w.project, ["repo"])
    const r = await run(w)
    expect(r.stderr).toContain(`the project config ${w.project} is not trusted`)
    expect(r.stderr).toContain("the layered config (none used: the project's is not trusted) configures no extensions")
    expect(r.stderr).not.toContain("none found")
    // --strict fails on it, and its help says so.
    expect((await run(w, ["--strict"])).code).toBe(1)
    expect((await runCli(["run", "--help"])).stderr).toMatch(
      /--strict\s+exit 1 when .*the project config is not trusted/
    )
  }, 120_000)

  it("trust DIR of a folder that does not exist (a typo) trusts nothing: not the project of the folder above it", async () => {
    const w = world("abhed-trust-typo-")
    layer(w, w.project, ["repo"])
    const store = join(w.root, "config", "abhed", "trust.json")
    for (const [dir, problem] of [
      ["nope", "no such folder"],
      [join(".abhed", "repo.sh"), "is not a folder"]
    ] as const) {
      const r = await runCli(["trust", "--yes", dir], { cwd: w.repo, env: w.env })
      expect(r.code).toBe(1)
      expect(r.stderr.trim()).toBe(`abhed-ext trust: ${join(w.repo, dir)}: ${problem}`)
      expect(r.stdout).toBe("")
      expect(NodeFs.existsSync(store)).toBe(false)
    }
  }, 120_000)

  it("the same name in two layers is an error naming both files", async () => {
    const w = world("abhed-trust-")
    layer(w, w.managed, ["guard"])
    layer(w, w.user, ["guard"])
    const r = await run(w)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(w.managed)
    expect(r.stderr).toContain(w.user)
    expect(pidsOf(w, "guard")).toEqual([])
  }, 120_000)

  it("a managed allow_managed_only runs only the managed extensions, and names the others", async () => {
    const w = world("abhed-trust-")
    layer(w, w.managed, ["corp"], { allow_managed_only: true })
    layer(w, w.user, ["mine"])
    const r = await run(w)
    expect(r.code).toBe(0)
    expect(reasons(r.stdout)).toEqual(["corp says no"])
    expect(r.stderr).toContain("allow_managed_only")
    expect(r.stderr).toContain(`mine, in ${w.user}`)
    expect(pidsOf(w, "mine")).toEqual([])
    for (const pid of pidsOf(w, "corp")) expect(exists(pid)).toBe(false)
  }, 120_000)

  it("an invalid layer is exit 2 naming its file, line and path; trust refuses it the same way", async () => {
    const w = world("abhed-trust-")
    NodeFs.mkdirSync(join(w.repo, ".abhed"), { recursive: true })
    NodeFs.writeFileSync(w.project, `{\n  // a comment is fine\n  "extensions": [{"name": "x"}]\n}`)
    const r = await run(w)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`${w.project}:3:18: extensions[0].command: missing`)
    const t = await runCli(["trust", "--yes"], { cwd: w.repo, env: w.env })
    expect(t.code).toBe(2)
    expect(t.stderr).toContain("extensions[0].command: missing")
    expect(NodeFs.existsSync(join(w.root, "config", "abhed", "trust.json"))).toBe(false)
  }, 120_000)

  it("--config FILE runs exactly that file, whatever the layers", async () => {
    const w = world("abhed-trust-")
    layer(w, w.user, ["mine"])
    const own = join(w.root, "own", "abhed.json")
    layer(w, own, ["own"])
    const r = await runCli(["run", "--config", own], { cwd: w.repo, env: w.env, input: call })
    expect(reasons(r.stdout)).toEqual(["own says no"])
    expect(pidsOf(w, "mine")).toEqual([])
  }, 120_000)
})
