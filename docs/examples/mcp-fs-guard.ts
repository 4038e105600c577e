/**
 * mcp-fs-guard: denies the filesystem MCP server's writes (`mcp__fs__write_file`, `edit_file`, `create_directory`,
 * `move_file`) outside one folder. Reads are left to the server's own allowed directories.
 *
 *   node mcp-fs-guard.ts FOLDER        (default: the extension's cwd)
 *
 * Give it `"match": [{"tool": "mcp__fs__*"}]` in abhed.json, so the host sends it the server's calls only. A path
 * is judged where it really lands: made absolute against FOLDER, `..` resolved, and the part of it that exists
 * followed through symbolic links (a link inside the folder to /etc is outside). A write tool called without its
 * path is denied: the guard cannot tell where it would write.
 */
import { Extension } from "@abhed/extension"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** The server's tools that change files, and the arguments that name the paths they change. */
export const WriteTools: ReadonlyMap<string, ReadonlyArray<string>> = new Map([
  ["mcp__fs__write_file", ["path"]],
  ["mcp__fs__edit_file", ["path"]],
  ["mcp__fs__create_directory", ["path"]],
  ["mcp__fs__move_file", ["source", "destination"]]
])

/** `path` with its longest existing prefix resolved through symbolic links, and the rest joined back on. */
const landing = (path: string): string => {
  const rest: Array<string> = []
  let head = path
  for (;;) {
    try {
      return Path.join(Fs.realpathSync(head), ...rest.reverse())
    } catch {
      const parent = Path.dirname(head)
      if (parent === head) return path
      rest.push(Path.basename(head))
      head = parent
    }
  }
}

/** Does `path` (relative paths against `folder`) land inside `folder`, or is it `folder` itself? */
export const inside = (folder: string, path: string): boolean => {
  const root = landing(Path.resolve(folder))
  const rel = Path.relative(root, landing(Path.resolve(root, path)))
  return rel === "" || (!rel.startsWith(`..${Path.sep}`) && rel !== ".." && !Path.isAbsolute(rel))
}

export const handlers = (folder: string): Extension.Handlers => ({
  tool_call: (req) => {
    const fields = WriteTools.get(req.tool)
    if (fields === undefined) return {}
    for (const field of fields) {
      const path = req.args[field]
      if (typeof path !== "string") return { block: true, reason: `${req.tool} without a ${field}: cannot tell where it writes` }
      if (!inside(folder, path)) return { block: true, reason: `${req.tool}: ${path} is outside ${folder}` }
    }
    return {}
  }
})

if (import.meta.main) Extension.main(handlers(process.argv[2] ?? process.cwd()))
