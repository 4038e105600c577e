import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fixture, Patient } from "./extension-helpers.ts"

/**
 * The extensions of test/fixtures/replay (node processes) and config files of them: the recordings `replay`
 * re-decides and the cases `abhed-ext test` runs use the same guard and redactor.
 */

export const replayExtension = (name: string, file: string, events: ReadonlyArray<string>) => ({
  name,
  command: process.execPath,
  args: [fixture(`replay/${file}`)],
  events,
  ...Patient,
  grace_ms: 300
})

export const guard = replayExtension("guard", "guard.mjs", ["tool_call", "tool_result", "context"])
export const redactor = replayExtension("redactor", "redactor.mjs", ["tool_call", "tool_result"])

/** A fresh folder for one test's files (a config, an audit, a report). */
export const tempDir = (): string => mkdtempSync(join(tmpdir(), "abhed-replay-"))

/** A config file of `extensions`, in a folder of its own. */
export const configFile = (extensions: ReadonlyArray<object>): string => {
  const file = join(tempDir(), "abhed.json")
  writeFileSync(file, JSON.stringify({ extensions }))
  return file
}
