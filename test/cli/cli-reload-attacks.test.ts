import * as NodeFs from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { jsonLines, runCli, startCli } from "../support/cli-helpers.ts"
import { call, markerExtensions, markerScript, pidsOf, type World, world } from "../support/config-world.ts"
import { exists, fixture } from "../support/extension-helpers.ts"

/**
 * `abhed-ext run --watch` attacked: edits a hurried user (or an editor) makes at awkward moments. Each is driven by
 * what the CLI prints and by files the test creates, never by sleeping: a guard the user added must run, or the
 * user must be told it does not.
 */

/** Written aside and renamed over, as editors save. */
const save = (file: string, text: string) => {
  NodeFs.mkdirSync(join(file, ".."), { recursive: true })
  NodeFs.writeFileSync(`${file}.tmp`, text)
  NodeFs.renameSync(`${file}.tmp`, file)
}

const layer = (w: World, file: string, names: ReadonlyArray<string>, extra: object = {}) => {
  for (const name of names) {
    if (!NodeFs.existsSync(join(file, "..", `${name}.sh`))) save(join(file, "..", `${name}.sh`), markerScript(name))
  }
  save(file, JSON.stringify({ extensions: markerExtensions(w, names, { grace_ms: 300, ...extra }) }))
}

const lineCount = (n: number) => (stdout: string) => jsonLines(stdout).length >= n
const reasonsOf = (stdout: string, n: number): ReadonlyArray<string> =>
  ((jsonLines(stdout)[n] as { reasons?: ReadonlyArray<{ reason: string }> }).reasons ?? []).map((r) => r.reason)

/** The marker extension, but it answers nothing (not even session_start) until the file $GATE exists. */
const gatedScript = (name: string) =>
  `#!/usr/bin/env bash
echo "$$" >> "$MARKER"
while [ ! -e "$GATE" ]; do sleep 0.05; done
while IFS= read -r line; do
  if [[ $line == *'"event":"tool_call"'* ]]; then echo '{"block":true,"reason":"${name} says no"}'; else echo '{}'; fi
done
`

/** Resolves once `test` holds, checking as often as a file may appear (a file the CLI's extension writes). */
const until = async (test: () => boolean): Promise<void> => {
  while (!test()) await new Promise((resolve) => setTimeout(resolve, 20))
}

describe("abhed-ext run --watch, attacked", () => {
  it("a guard added while the session's extensions are starting runs once they have started", async () => {
    const w = world("abhed-reload-attack-")
    const file = join(w.root, "abhed.json")
    const gate = join(w.root, "gate")
    save(join(w.root, "slow.sh"), gatedScript("slow"))
    layer(w, file, ["slow"], { env: { MARKER: w.marker("slow"), GATE: gate } })
    const cli = startCli(["run", "--watch", "--config", file], { env: w.env, cwd: w.root })
    await cli.stderr((e) => e.includes("for changes"))
    cli.write(call)
    // The first request is starting the host from the config as it was: slow has started and awaits the gate.
    await until(() => pidsOf(w, "slow").length > 0)
    save(join(w.root, "added.sh"), markerScript("added"))
    save(
      file,
      JSON.stringify({
        extensions: [
          ...markerExtensions(w, ["slow"], { grace_ms: 300, env: { MARKER: w.marker("slow"), GATE: gate } }),
          ...markerExtensions(w, ["added"], { grace_ms: 300 })
        ]
      })
    )
    // Told, and not told it is in use while it cannot be yet.
    const told = await cli.stderr((e) => e.includes("reloaded") || e.includes("once the extensions have started"))
    expect(told).not.toContain("has not started")
    NodeFs.writeFileSync(gate, "")
    await cli.stdout(lineCount(1))
    // Once the host has started, the edit made meanwhile is reloaded into it (not claimed and dropped).
    const stderr = await cli.stderr((e) => e.includes("started added") || e.includes("has not started"))
    expect(stderr).not.toContain("has not started")
    cli.write(call)
    const out = await cli.stdout(lineCount(2))
    expect(reasonsOf(out, 1), `${out}\n${stderr}`).toEqual(["added says no", "slow says no"])
    cli.end()
    const result = await cli.done
    expect(result.code, result.stderr).toBe(0)
    for (const pid of [...pidsOf(w, "slow"), ...pidsOf(w, "added")]) expect(exists(pid)).toBe(false)
  }, 120_000)

  it("a layer whose folder does not exist yet is watched: creating it mid-session starts its guard", async () => {
    const w = world("abhed-reload-attack-")
    // No user config folder at all: the user creates ~/.config/abhed/abhed.json while the run watches.
    const cli = startCli(["run", "--watch"], { env: w.env, cwd: join(w.repo, "src") })
    await cli.stderr((e) => e.includes("for changes"))
    layer(w, w.user, ["late"])
    await cli.stderr((e) => e.includes("reloaded"))
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(1)), 0)).toEqual(["late says no"])
    cli.end()
    const result = await cli.done
    expect(result.code, result.stderr).toBe(0)
    for (const pid of pidsOf(w, "late")) expect(exists(pid)).toBe(false)
  }, 120_000)

  it("an invoke_tool after a reload handed its tool to another extension is refused, not run by the new one", async () => {
    const w = world("abhed-reload-attack-")
    const file = join(w.root, "abhed.json")
    const ran = join(w.root, "ran")
    // Provides the tool "build"; writes who ran it to `ran`.
    const provider = (name: string) => ({
      name,
      command: process.execPath,
      args: [
        "-e",
        `require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
          const req = JSON.parse(line)
          if (req.event === "invoke_tool") require("node:fs").appendFileSync(${JSON.stringify(ran)}, "${name}\\n")
          const tools = [{ name: "build", description: "", input_schema: { type: "object" } }]
          const reply = req.event === "list_tools" ? { tools } : req.event === "invoke_tool" ? { result: "${name}" } : {}
          process.stdout.write(JSON.stringify({ id: req.id, ...reply }) + "\\n")
        })`
      ],
      events: ["list_tools", "invoke_tool"],
      startup_timeout_ms: 30_000,
      timeout_ms: 15_000
    })
    save(file, JSON.stringify({ extensions: [provider("maker")] }))
    const cli = startCli(["run", "--watch", "--config", file], { env: w.env, cwd: w.root })
    cli.write(`${JSON.stringify({ event: "tool_call", tool: "build", args: {}, call_id: "b" })}\n`)
    expect(jsonLines(await cli.stdout(lineCount(1)))[0]).toMatchObject({ decision: "allow" })
    save(file, JSON.stringify({ extensions: [provider("usurper")] }))
    await cli.stderr((e) => e.includes("started usurper"))
    cli.write(`${JSON.stringify({ event: "invoke_tool", tool: "build", args: {}, call_id: "b" })}\n`)
    expect(jsonLines(await cli.stdout(lineCount(2)))[1]).toEqual({
      error:
        'invoke_tool: "build" is no longer the tool the tool_call "b" (line 1) was decided on (a reload changed ' +
        "which extension provides it, or its input_schema): send a new tool_call; nothing ran",
      line: 2
    })
    cli.end()
    const result = await cli.done
    expect(result.code, result.stderr).toBe(0)
    expect(NodeFs.existsSync(ran)).toBe(false)
  }, 120_000)

  it("an invoke_tool after an ask, a reload in between that adds a guard denying the tool: refused, not run", async () => {
    const w = world("abhed-reload-attack-")
    const file = join(w.root, "abhed.json")
    const ran = join(w.root, "ran")
    // Provides the tool "build" and asks about every call of it; writes to `ran` when it runs.
    const maker = {
      name: "maker",
      command: process.execPath,
      args: [
        "-e",
        `require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
          const req = JSON.parse(line)
          if (req.event === "invoke_tool") require("node:fs").appendFileSync(${JSON.stringify(ran)}, "ran\\n")
          const tools = [{ name: "build", description: "", input_schema: { type: "object" } }]
          const reply =
            req.event === "list_tools" ? { tools } : req.event === "invoke_tool" ? { result: "built" }
            : req.event === "tool_call" ? { ask: true, reason: "sure?" } : {}
          process.stdout.write(JSON.stringify({ id: req.id, ...reply }) + "\\n")
        })`
      ],
      events: ["list_tools", "invoke_tool", "tool_call"],
      startup_timeout_ms: 30_000,
      timeout_ms: 15_000
    }
    save(file, JSON.stringify({ extensions: [maker] }))
    const cli = startCli(["run", "--watch", "--config", file], { env: w.env, cwd: w.root })
    cli.write(`${JSON.stringify({ event: "tool_call", tool: "build", args: {}, call_id: "b" })}\n`)
    expect(jsonLines(await cli.stdout(lineCount(1)))[0]).toMatchObject({ decision: "ask" })
    // While the agent asks its user, the user adds a guard that denies every call.
    save(join(w.root, "blocker.sh"), markerScript("blocker"))
    save(
      file,
      JSON.stringify({
        extensions: [maker, ...markerExtensions(w, ["blocker"], { grace_ms: 300 })]
      })
    )
    await cli.stderr((e) => e.includes("started blocker"))
    // The user said yes: the agent sends the invoke. The verdict was the old set's: refused.
    cli.write(`${JSON.stringify({ event: "invoke_tool", tool: "build", args: {}, call_id: "b" })}\n`)
    expect(jsonLines(await cli.stdout(lineCount(2)))[1]).toEqual({
      error:
        'invoke_tool: the config was reloaded since the tool_call "b" (line 1) was decided: its verdict was the old ' +
        "extensions'; send a new tool_call for the extensions in force to judge; nothing ran",
      line: 2
    })
    // Sent again, the call is judged by the set in force: the guard's deny stands.
    cli.write(`${JSON.stringify({ event: "tool_call", tool: "build", args: {}, call_id: "b2" })}\n`)
    expect(jsonLines(await cli.stdout(lineCount(3)))[2]).toMatchObject({ decision: "deny" })
    cli.end()
    const result = await cli.done
    expect(result.code, result.stderr).toBe(0)
    expect(NodeFs.existsSync(ran)).toBe(false)
  }, 120_000)

  it("a folder the system will not watch (its limit of watches reached) is named on stderr, not claimed watched", async () => {
    const w = world("abhed-reload-attack-")
    const file = join(w.root, "unwatchable", "abhed.json")
    layer(w, file, ["first"])
    const r = await runCli(["run", "--watch", "--config", file], {
      env: { ...w.env, NODE_OPTIONS: `--import ${fixture("no-watch.mjs")}`, ABHED_TEST_NO_WATCH: "unwatchable" },
      cwd: w.root,
      input: ""
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain(
      `abhed-ext run: warning: cannot watch ${join(w.root, "unwatchable")} (ENOSPC: System limit for number of file ` +
        "watchers reached"
    )
    expect(r.stderr).toContain("a change there is not seen")
    // Not claimed watched in the next line either.
    expect(r.stderr).not.toContain(file)
  })

  it("a layer warning (allow_managed_only) names a project folder's terminal controls escaped", async () => {
    const w = world("abhed-reload-attack-")
    // A cloned repository's folder named to set the terminal's title, then hide what follows.
    const repo = join(w.root, "repo\u001b]0;owned\u0007\u202e")
    NodeFs.mkdirSync(join(repo, ".git"), { recursive: true })
    layer(w, join(repo, ".abhed", "abhed.json"), ["proj"])
    save(join(w.managed, "..", "corp.sh"), markerScript("corp"))
    save(w.managed, JSON.stringify({ extensions: markerExtensions(w, ["corp"]), allow_managed_only: true }))
    expect((await runCli(["trust", "--yes"], { cwd: repo, env: w.env })).code).toBe(0)
    const r = await runCli(["run", "--watch"], { env: w.env, cwd: repo, input: "" })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain("allow_managed_only")
    expect(r.stderr).toContain("repo\\x1b]0;owned\\x07\\u202e")
    expect(r.stderr).not.toMatch(/[\u001b\u0007\u202e]/)
  }, 120_000)

  it("a script that is a symbolic link is watched where it leads: an edit of its target restarts the extension", async () => {
    const w = world("abhed-reload-attack-")
    const file = join(w.root, "conf", "abhed.json")
    // The script kept elsewhere (a dotfiles folder) and linked beside the config.
    const target = join(w.root, "dotfiles", "first.sh")
    save(target, markerScript("first"))
    NodeFs.mkdirSync(join(file, ".."), { recursive: true })
    NodeFs.symlinkSync(target, join(file, "..", "first.sh"))
    layer(w, file, ["first"])
    const cli = startCli(["run", "--watch", "--config", file], { env: w.env, cwd: w.root })
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(1)), 0)).toEqual(["first says no"])
    save(target, markerScript("first", 2))
    expect(await cli.stderr((e) => e.includes("reloaded"))).toContain("restarted first")
    cli.end()
    const result = await cli.done
    expect(result.code, result.stderr).toBe(0)
    expect(pidsOf(w, "first")).toHaveLength(2)
    for (const pid of pidsOf(w, "first")) expect(exists(pid)).toBe(false)
  }, 120_000)

  it("a layer file that is a symbolic link is watched where it leads: an edit of its target reloads", async () => {
    const w = world("abhed-reload-attack-")
    // ~/.config/abhed/abhed.json linked to a dotfiles folder, edited there.
    const target = join(w.root, "dotfiles", "abhed.json")
    layer(w, target, ["first"])
    NodeFs.mkdirSync(join(w.user, ".."), { recursive: true })
    NodeFs.symlinkSync(target, w.user)
    const cli = startCli(["run", "--watch"], { env: w.env, cwd: join(w.repo, "src") })
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(1)), 0)).toEqual(["first says no"])
    layer(w, target, ["first", "second"])
    expect(await cli.stderr((e) => e.includes("reloaded"))).toContain("kept first; started second")
    cli.end()
    const result = await cli.done
    expect(result.code, result.stderr).toBe(0)
    for (const pid of [...pidsOf(w, "first"), ...pidsOf(w, "second")]) expect(exists(pid)).toBe(false)
  }, 120_000)

  it("a trusted project's .abhed removed and put back (a branch switch) from a subfolder starts its guard again", async () => {
    const w = world("abhed-reload-attack-")
    layer(w, w.project, ["proj"])
    expect((await runCli(["trust", "--yes"], { cwd: w.repo, env: w.env })).code).toBe(0)
    const saved = {
      config: NodeFs.readFileSync(w.project, "utf8"),
      script: NodeFs.readFileSync(join(w.repo, ".abhed", "proj.sh"), "utf8")
    }
    const cli = startCli(["run", "--watch"], { env: w.env, cwd: join(w.repo, "src") })
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(1)), 0)).toEqual(["proj says no"])
    NodeFs.rmSync(join(w.repo, ".abhed"), { recursive: true })
    await cli.stderr((e) => e.includes("stopped proj"))
    // Back with the same content: still trusted, and nothing else changes (not the trust store).
    save(join(w.repo, ".abhed", "proj.sh"), saved.script)
    save(w.project, saved.config)
    await cli.stderr((e) => e.includes("started proj"))
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(2)), 1)).toEqual(["proj says no"])
    cli.end()
    const result = await cli.done
    expect(result.code, result.stderr).toBe(0)
    for (const pid of pidsOf(w, "proj")) expect(exists(pid)).toBe(false)
  }, 120_000)

  it("a guard added before its script is written starts once the script is there (and says it died meanwhile)", async () => {
    const w = world("abhed-reload-attack-")
    const file = join(w.root, "abhed.json")
    layer(w, file, ["first"])
    const cli = startCli(["run", "--watch", "--config", file], { env: w.env, cwd: w.root })
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(1)), 0)).toEqual(["first says no"])
    save(file, JSON.stringify({ extensions: markerExtensions(w, ["first", "second"], { grace_ms: 300 }) }))
    await cli.stderr((e) => e.includes("started second"))
    save(join(w.root, "second.sh"), markerScript("second"))
    await cli.stderr((e) => e.includes("restarted second"))
    cli.write(call)
    expect(reasonsOf(await cli.stdout(lineCount(2)), 1)).toEqual(["first says no", "second says no"])
    cli.end()
    const result = await cli.done
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toMatch(/extension second is dead/)
    expect(pidsOf(w, "first")).toHaveLength(1)
  }, 120_000)

  it("--watch with the config on stdin (-c -) is bad usage: there is no file to watch", async () => {
    const w = world("abhed-reload-attack-")
    const events = join(w.root, "events.jsonl")
    NodeFs.writeFileSync(events, call)
    const r = await runCli(["run", "--watch", "-c", "-", events], { env: w.env, cwd: w.root, input: "{}" })
    expect(r.code).toBe(64)
    expect(r.stderr).toContain("--watch watches the config's file: --config - (stdin) has none")
    expect(r.stdout).toBe("")
  })
})
