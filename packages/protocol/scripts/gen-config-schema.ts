/**
 * Writes docs/abhed.schema.json, the JSON Schema editors use for `abhed.json`, from the effect Schema.
 * Run `pnpm gen:schema` after changing `ConfigSchema.ts`; a test fails while the checked-in file is stale.
 */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { configJsonSchemaText } from "../src/ConfigSchema.ts"

export const schemaPath = fileURLToPath(new URL("../../../docs/abhed.schema.json", import.meta.url))

if (import.meta.main) {
  writeFileSync(schemaPath, configJsonSchemaText())
  console.log(`wrote ${schemaPath}`)
}
