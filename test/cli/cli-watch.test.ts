import * as NodeFs from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, runCli, startCli } from "../support/cli-helpers.ts"
import { Patient } from "../support/extension-helpers.ts"

/**
 * `abhed-ext run --watch` with real processes and a temporary HOME: an edited config is picked up mid-session
 * (driven by input lines written after the stderr notice, never by sleeping), unchanged extensions keep their
 * process, a bad edit keeps the set running, a trusted project whose script changes stops being run.
 */

/** Appends its pid to $MARKER when it starts; denies every tool call, naming itself. */
const script = (name: string, version = 1) =>
  `#!/usr/bin/env bash
# version ${version}
echo "$$" >> "$MARKER"
while IFS= read -r line; do
  if [[ $line == *'"event":"tool_call"'* ]]; then echo '{"block":true,"reason":"${name} says no"}'; else echo '{}'; fi
done
`

const world = () => {
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync(join(tmpdir(), "abhed-watch-")))
  const repo = join(root, "repo")
  NodeFs.mkdirSync(join(repo, ".git"), { recursive: true })
  NodeFs.mkdirSync(join(repo, "src"), { recursive: true })
  return {
    root,
    repo,
    env: {
      HOME: join(root, "home"),
      XDG_CONFIG_HOME: join(root, "config"),
      ABHED_MANAGED_CONFIG: join(root, "etc", "abhed.json")
    },
    marker: (name: string) => join(root, `marker-${name}`),
    user: join(root, "config", "abhed", "abhed.json"),
    project: join(repo, ".abhed", "abhed.json")
  }
}
type World = ReturnType<typeof world>

/** Written aside and renamed over, as editors save. */
const save = (file: string, text: string) => {
  NodeFs.mkdirSync(join(file, ".."), { recursive: true })
  NodeFs.writeFileSync(`${file}.tmp`, text)
  NodeFs.renameSync(`${file}.tmp`, file)
}

const layer = (w: World, file: string, names: ReadonlyArray<string>) => {
  for (const name of names) {
    if (!NodeFs.existsSync(join(file, "..", `${name}.sh`))) save(join(file, "..", `${name}.sh`), script(name))
  }
  save(
    file,
    JSON.stringify({
      extensions: names.map((name) => ({
        name,
        command: "bash",
        args: [`${name}.sh`],
        env: { MARKER: w.marker(name) },
        ...Patient,
        grace_ms: 300
      }))
    })
  )
}

const call = `{"event":"tool_call","tool":"bash","args":{"command":"ls"}}\n`
const pids = (w: World, name: string): ReadonlyArray<number> =>
  NodeFs.existsSync(w.marker(name)) ? NodeFs.readFileSync(w.marker(name), "utf8").trim().split("\n").map(Number) : []
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
const lineCount = (n: number) => (stdout: string) => jsonLines(stdout).length >= n
const reasonsOf = (stdout: string, n: number): ReadonlyArray<string> =>
  ((jsonLines(stdout)[n] as { reasons?: ReadonlyArray<{ reason: string }> }).reasons ?? []).map((r) => r.reason)
const count = (text: string, needle: string) => text.split(needle).length - 1

describe("abhed-ext run --watch", () => {
  it("--config FILE: an edit mid-session adds an extension, keeps the running one, and a bad edit changes nothing", async () => {
    const w = world()
    const file = join(w.root, "abhed.json")
    layer(w, file, ["first"])
    const cli = startCli(["run", "--watch", "--summary", "--config", file], { env: w.env, cwd: w.root })
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(1)), 0)).toEqual(["first says no"])

    layer(w, file, ["first", "second"])
    await cli.stderr((e) => e.includes("reloaded"))
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(2)), 1)).toEqual(["first says no", "second says no"])
    expect(pids(w, "first")).toHaveLength(1)
    expect(pids(w, "second")).toHaveLength(1)

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
    for (const pid of [...pids(w, "first"), ...pids(w, "second")]) expect(alive(pid)).toBe(false)
  }, 120_000)

  it("an edit before the first request is what the session starts with", async () => {
    const w = world()
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
    expect(pids(w, "early")).toEqual([])
    for (const pid of pids(w, "late")) expect(alive(pid)).toBe(false)
  }, 120_000)

  it("layers: a trusted project's script changed by one byte stops its extension, saying what to run", async () => {
    const w = world()
    layer(w, w.user, ["mine"])
    layer(w, w.project, ["proj"])
    const trusted = await runCli(["trust", "--yes"], { cwd: join(w.repo, "src"), env: w.env })
    expect(trusted.code).toBe(0)
    const cli = startCli(["run", "--watch"], { env: w.env, cwd: join(w.repo, "src") })
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(1)), 0)).toEqual(["mine says no", "proj says no"])
    const [proj] = pids(w, "proj")

    save(join(w.repo, ".abhed", "proj.sh"), script("proj", 2))
    const stderr = await cli.stderr((e) => e.includes("reloaded"))
    expect(stderr).toContain("proj.sh changed")
    expect(stderr).toContain(`abhed-ext trust ${w.repo}`)
    expect(stderr).toContain("kept mine; stopped proj")
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(2)), 1)).toEqual(["mine says no"])
    expect(alive(proj ?? -1)).toBe(false)

    // Trusted again: the trust store changed, so the project's extension starts again.
    const again = await runCli(["trust", "--yes"], { cwd: join(w.repo, "src"), env: w.env })
    expect(again.code).toBe(0)
    await cli.stderr((e) => count(e, "reloaded") >= 2)
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(3)), 2)).toEqual(["mine says no", "proj says no"])
    expect(pids(w, "mine")).toHaveLength(1)

    cli.end()
    const result = await cli.done
    expect(result.code).toBe(0)
    for (const pid of [...pids(w, "mine"), ...pids(w, "proj")]) expect(alive(pid)).toBe(false)
  }, 120_000)
})
