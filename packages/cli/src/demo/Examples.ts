import { fileURLToPath } from "node:url"

/**
 * The bundled examples, located from this file (not the cwd), so `abhed-ext demo` works from anywhere. Run from
 * source in the workspace (this file is `src/demo/Examples.ts`) they are docs/examples; the built package (this file
 * is `dist/demo/Examples.js`) ships them compiled to JavaScript in its own `examples/` (see
 * scripts/bundle-examples.ts).
 */
const fromSource = import.meta.url.endsWith(".ts")
export const examplesDir = fileURLToPath(
  new URL(fromSource ? "../../../../docs/examples/" : "../../examples/", import.meta.url)
)
export const exampleConfig = `${examplesDir}abhed.json`
export const exampleSession = `${examplesDir}session.jsonl`
