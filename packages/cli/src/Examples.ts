import { fileURLToPath } from "node:url"

/** The bundled examples, located from this file (not the cwd), so `abhed-ext demo` works from anywhere. */
export const examplesDir = fileURLToPath(new URL("../../../docs/examples/", import.meta.url))
export const exampleConfig = `${examplesDir}abhed.json`
export const exampleSession = `${examplesDir}session.jsonl`
