/**
 * Puts the demo's example extensions and sample session inside the @abhed/cli package (`examples/`), so an
 * installed `abhed-ext demo` needs nothing outside it. Run by `pnpm build`, after tsc has compiled the
 * TypeScript examples into `examples/*.js` (Node does not strip types under node_modules, so the package ships
 * JavaScript). Copies the shell and Python examples and the session as they are, and writes an abhed.json whose
 * `node X.ts` extensions run `node X.js`.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const source = fileURLToPath(new URL("../../../docs/examples/", import.meta.url))
const target = fileURLToPath(new URL("../examples/", import.meta.url))

mkdirSync(target, { recursive: true })
for (const name of readdirSync(source)) {
  if (name.endsWith(".sh") || name.endsWith(".py") || name.endsWith(".jsonl"))
    copyFileSync(`${source}${name}`, `${target}${name}`)
}

const config: unknown = JSON.parse(readFileSync(`${source}abhed.json`, "utf8"))
const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
if (!isRecord(config) || !Array.isArray(config["extensions"]))
  throw new Error(`${source}abhed.json: no extensions array`)
// The schema path is relative to docs/; the package does not ship it.
delete config["$schema"]
for (const extension of config["extensions"]) {
  if (isRecord(extension) && extension["command"] === "node" && Array.isArray(extension["args"])) {
    extension["args"] = extension["args"].map((arg) => (typeof arg === "string" ? arg.replace(/\.ts$/, ".js") : arg))
  }
}
writeFileSync(`${target}abhed.json`, `${JSON.stringify(config, null, 2)}\n`)
