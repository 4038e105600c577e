import * as NodeFs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, runCli, startCli } from "../support/cli-helpers.ts"
import { call, markerExtensions, markerScript, pidsOf, type World, world } from "../support/config-world.ts"
import { exists } from "../support/extension-helpers.ts"

/**
 * `abhed-ext run --watch` with real processes and a temporary HOME: an edited config is picked up mid-session
 * (driven by input lines written after the stderr notice, never by sleeping), unchanged extensions keep their
 * process, a bad edit keeps the set running, a trusted project whose script changes stops being run.
 */

/** Written aside and renamed over, as editors save. */
const save = (file: string, text: string) => {
  NodeFs.mkdirSync(join(file, ".."), { recursive: true })
  NodeFs.writeFileSync(`${file}.tmp`, text)
  NodeFs.renameSync(`${file}.tmp`, file)
}

const layer = (w: World, file: string, names: ReadonlyArray<string>) => {
  for (const name of names) {
    if (!NodeFs.existsSync(join(file, "..", `${name}.sh`))) save(join(file, "..", `${name}.sh`), markerScript(name))
  }
  save(file, JSON.stringify({ extensions: markerExtensions(w, names, { grace_ms: 300 }) }))
}

const lineCount = (n: number) => (stdout: string) => jsonLines(stdout).length >= n
const reasonsOf = (stdout: string, n: number): ReadonlyArray<string> =>
  ((jsonLines(stdout)[n] as { reasons?: ReadonlyArray<{ reason: string }> }).reasons ?? []).map((r) => r.reason)
const count = (text: string, needle: string) => text.split(needle).length - 1

describe("abhed-ext run --watch", () => {
  it("--config FILE: an edit mid-session adds an extension, keeps the running one, and a bad edit changes nothing", async () => {
    const w = world("abhed-watch-")
    const file = join(w.root, "abhed.json")
    layer(w, file, ["first"])
    const cli = startCli(["run", "--watch", "--summary", "--config", file], { env: w.env, cwd: w.root })
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(1)), 0)).toEqual(["first says no"])

    layer(w, file, ["first", "second"])
    await cli.stderr((e) => e.includes("reloaded"))
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(2)), 1)).toEqual(["first says no", "second says no"])
    expect(pidsOf(w, "first")).toHaveLength(1)
    expect(pidsOf(w, "second")).toHaveLength(1)

    save(file, '{ "extensions": [ { "name": 3 ')
    await cli.stderr((e) => e.includes("reload failed"))
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(3)), 2)).toEqual(["first says no", "second says no"])

    cli.end()
    const result = await cli.done
    expect(result.code).toBe(0)
    expect(result.stderr).toContain("reloaded")
    expect(result.stderr).toContain("kept first; started second")
    // The summary counts the extension the reload started.
    expect(result.stderr).toMatch(/^ {2}second +live; 2 replies/m)
    expect(result.stderr).toContain(`${file}:`) // the bad config's problem, with its file
    for (const pid of [...pidsOf(w, "first"), ...pidsOf(w, "second")]) expect(exists(pid)).toBe(false)
  }, 120_000)

  it("an edit before the first request is what the session starts with", async () => {
    const w = world("abhed-watch-")
    const file = join(w.root, "abhed.json")
    layer(w, file, ["early"])
    const cli = startCli(["run", "--watch", "--config", file], { env: w.env, cwd: w.root })
    await cli.stderr((e) => e.includes("for changes"))
    layer(w, file, ["late"])
    await cli.stderr((e) => e.includes("the session has not started"))
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(1)), 0)).toEqual(["late says no"])
    cli.end()
    expect((await cli.done).code).toBe(0)
    expect(pidsOf(w, "early")).toEqual([])
    for (const pid of pidsOf(w, "late")) expect(exists(pid)).toBe(false)
  }, 120_000)

  it("layers: a trusted project's script changed by one byte stops its extension, saying what to run", async () => {
    const w = world("abhed-watch-")
    layer(w, w.user, ["mine"])
    layer(w, w.project, ["proj"])
    const trusted = await runCli(["trust", "--yes"], { cwd: join(w.repo, "src"), env: w.env })
    expect(trusted.code).toBe(0)
    const cli = startCli(["run", "--watch"], { env: w.env, cwd: join(w.repo, "src") })
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(1)), 0)).toEqual(["mine says no", "proj says no"])
    const [proj] = pidsOf(w, "proj")

    save(join(w.repo, ".abhed", "proj.sh"), markerScript("proj", 2))
    const stderr = await cli.stderr((e) => e.includes("reloaded"))
    expect(stderr).toContain("proj.sh changed")
    expect(stderr).toContain(`abhed-ext trust ${w.repo}`)
    expect(stderr).toContain("kept mine; stopped proj")
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(2)), 1)).toEqual(["mine says no"])
    expect(exists(proj ?? -1)).toBe(false)

    // Trusted again: the trust store changed, so the project's extension starts again.
    const again = await runCli(["trust", "--yes"], { cwd: join(w.repo, "src"), env: w.env })
    expect(again.code).toBe(0)
    await cli.stderr((e) => count(e, "reloaded") >= 2)
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(3)), 2)).toEqual(["mine says no", "proj says no"])
    expect(pidsOf(w, "mine")).toHaveLength(1)

    cli.end()
    const result = await cli.done
    expect(result.code).toBe(0)
    for (const pid of [...pidsOf(w, "mine"), ...pidsOf(w, "proj")]) expect(exists(pid)).toBe(false)
  }, 120_000)

  it("a path that holds terminal controls is shown escaped in what --watch says", async () => {
    const w = world("abhed-watch-")
    // A cloned project's folder may be named to drive the terminal: set its title, then hide what follows.
    const dir = join(w.root, "proj\u001b]0;owned\u0007\u202e")
    const file = join(dir, "abhed.json")
    layer(w, file, ["first"])
    const r = await runCli(["run", "--watch", "--config", file], { env: w.env, cwd: w.root, input: "" })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain("watching ")
    expect(r.stderr).toContain("proj\\x1b]0;owned\\x07\\u202e")
    expect(r.stderr).not.toMatch(/[\u001b\u0007\u202e]/)
  })
})
