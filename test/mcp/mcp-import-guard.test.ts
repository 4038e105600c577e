import { mkdirSync, mkdtempSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Extension } from "@abhed/extension"
import { describe, expect, it } from "vitest"
import { handlers, inside } from "../../docs/examples/mcp-fs-guard.ts"

/** docs/mcp.md's guard for the filesystem MCP server (its transcript runs it through `abhed-ext run`). */

/** The guard's reply to one tool_call, as `Extension.main` writes it (less the echoed id). */
const decide = async (folder: string, tool: string, args: Record<string, unknown>) => {
  const line = JSON.stringify({ event: "tool_call", session_id: "s", id: "1", call_id: "c", tool, args })
  const { id: _, ...reply } = JSON.parse(await Extension.respond(handlers(folder))(line)) as Record<string, unknown>
  return reply
}

describe("docs/examples/mcp-fs-guard.ts", () => {
  const root = mkdtempSync(join(tmpdir(), "abhed-mcp-guard-"))
  const folder = join(root, "app")
  mkdirSync(join(folder, "src"), { recursive: true })
  symlinkSync("/etc", join(folder, "etc-link"))

  it("inside the folder: a file, a new file in a new folder, the folder itself, a relative path", () => {
    expect(inside(folder, join(folder, "src/a.ts"))).toBe(true)
    expect(inside(folder, join(folder, "new/deeper/b.ts"))).toBe(true)
    expect(inside(folder, folder)).toBe(true)
    expect(inside(folder, "src/c.ts")).toBe(true)
  })

  it("outside: .. out of it, a sibling whose name starts the same, a symbolic link to /etc", () => {
    expect(inside(folder, join(folder, "../outside.txt"))).toBe(false)
    expect(inside(folder, `${folder}-evil/x`)).toBe(false)
    expect(inside(folder, join(folder, "etc-link/cron.d/job"))).toBe(false)
  })

  it("denies a write outside, a move to outside, and a write without its path; passes reads and other tools", async () => {
    expect(await decide(folder, "mcp__fs__write_file", { path: join(folder, "src/a.ts"), content: "" })).toEqual({})
    expect(
      await decide(folder, "mcp__fs__write_file", { path: join(folder, "etc-link/passwd"), content: "" })
    ).toMatchObject({ block: true })
    expect(
      await decide(folder, "mcp__fs__move_file", { source: join(folder, "a"), destination: "/tmp/a" })
    ).toMatchObject({ block: true })
    expect(await decide(folder, "mcp__fs__edit_file", { edits: [] })).toMatchObject({
      block: true,
      reason: expect.stringContaining("without a path")
    })
    expect(await decide(folder, "mcp__fs__read_text_file", { path: "/etc/passwd" })).toEqual({})
    expect(await decide(folder, "bash", { command: "rm -rf /" })).toEqual({})
  })
})
