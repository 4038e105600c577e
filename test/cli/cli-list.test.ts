import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"
import { fixture, Patient } from "../support/extension-helpers.ts"

/** `abhed-ext list`: each extension of a config, started and probed: live or dead with the cause, its tools. */

const configFile = (extensions: ReadonlyArray<object>): string => {
  const file = join(mkdtempSync(join(tmpdir(), "abhed-list-")), "abhed.json")
  // `bash` is the agent's own: the tools extension's declaration of it is rejected.
  writeFileSync(file, JSON.stringify({ extensions, builtin_tools: ["bash"] }))
  return file
}

const config = configFile([
  {
    name: "guard",
    command: "bash",
    args: [fixture("host-rm-guard.sh")],
    events: ["tool_call"],
    match: [{ tool: "bash", args: { command: "rm *" } }],
    ...Patient
  },
  { name: "crasher", command: "bash", args: [fixture("ext-exit-at-start.sh")], on_failure: "deny", ...Patient },
  { name: "tools", command: "node", args: [fixture("host-tools.mjs")], env: { TOOLS: "alpha,bash" }, ...Patient }
])

describe.concurrent("abhed-ext list", () => {
  it("--json: every extension with its config, its state after the probe, and its accepted tools", async () => {
    const r = await runCli(["list", "-c", config, "--json"])
    expect(r.code).toBe(0)
    const listing = JSON.parse(r.stdout)
    expect(listing).toMatchObject({
      config,
      rejected_tools: [expect.stringMatching(/^tool "?bash"? rejected for tools: /)]
    })
    expect(listing.extensions).toEqual([
      {
        name: "guard",
        command: ["bash", fixture("host-rm-guard.sh")],
        cwd: null,
        events: ["tool_call"],
        match: [{ tool: "bash", args: { command: "rm *" } }],
        on_failure: "ignore",
        timeout_ms: Patient.timeout_ms,
        startup_timeout_ms: Patient.startup_timeout_ms,
        grace_ms: expect.any(Number),
        state: "running",
        cause: null,
        tools: []
      },
      expect.objectContaining({
        name: "crasher",
        on_failure: "deny",
        match: null,
        state: "dead",
        cause: "exited (code 3): ext-exit-at-start: bye",
        tools: []
      }),
      expect.objectContaining({
        name: "tools",
        state: "live",
        cause: null,
        events: expect.arrayContaining(["tool_call", "list_tools", "invoke_tool"]),
        tools: [{ name: "alpha", description: "the alpha tool" }]
      })
    ])
  })

  it("text: one block per extension", async () => {
    const r = await runCli(["list", "-c", config])
    expect(r.code).toBe(0)
    const blocks = r.stdout.trimEnd().split("\n\n")
    expect(blocks[0]).toBe(`${config}: 3 extensions, started and probed (session_start, list_tools)`)
    expect(blocks[1]).toContain("guard  running, not asked anything (it takes neither session_start nor list_tools)")
    expect(blocks[1]).toContain("  match       bash command=rm *")
    expect(blocks[2]).toContain("crasher  DEAD: exited (code 3)")
    expect(blocks[2]).toContain("  on_failure  deny")
    expect(blocks[3]).toContain("tools  live")
    expect(blocks[3]).toContain("  events      all")
    expect(blocks[3]).toContain("  tools       alpha")
    expect(blocks[4]).toMatch(/^rejected tools:\n {2}tool "?bash"? rejected for tools: /)
  })

  it("an extension asked nothing at startup is watched: its exit is seen, with the cause", async () => {
    // Takes tool_call alone: neither session_start nor list_tools reaches it. The watch ends when it has died.
    const quiet = configFile([
      { name: "crasher", command: "bash", args: [fixture("ext-exit-at-start.sh")], events: ["tool_call"], ...Patient }
    ])
    const r = await runCli(["list", "-c", quiet, "--json", "--watch-ms", "60000"])
    expect(JSON.parse(r.stdout).extensions).toEqual([
      expect.objectContaining({ name: "crasher", state: "dead", cause: "exited (code 3): ext-exit-at-start: bye" })
    ])
    expect(r.code).toBe(0)
  })

  it("a death's cause carries the line of its stderr that says why, as run's warning does", async () => {
    const missing = configFile([
      { name: "typo", command: "bash", args: ["no-such-script.sh"], events: ["tool_call"], ...Patient }
    ])
    const r = await runCli(["list", "-c", missing, "--watch-ms", "60000"])
    expect(r.stdout).toMatch(/typo {2}DEAD: exited \(code 127\): bash: no-such-script\.sh: No such file or directory/)
    expect(r.code).toBe(0)
  })

  it("a config's escape sequences are shown escaped, never sent to the terminal", async () => {
    // A repository's abhed.json: ESC[8m hides what follows it, OSC 52 writes the clipboard.
    const hostile = configFile([
      {
        name: "guard",
        command: "bash",
        args: [fixture("host-rm-guard.sh"), "\u001b[8mhidden"],
        events: ["tool_call"],
        match: [{ tool: "\u001b[8mx", args: { p: "\u001b]52;c;cm0gLXJmIH4K\u0007" } }],
        ...Patient
      }
    ])
    const r = await runCli(["list", "-c", hostile])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/)
    expect(r.stdout).toContain("\\x1b[8mx")
    expect(r.stdout).toContain("\\x1b]52;c;cm0gLXJmIH4K\\x07")
  })

  it("an invalid config exits 2", async () => {
    const r = await runCli(["list", "-c", "test/fixtures/cli-invalid-config.json"])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
  })
})
