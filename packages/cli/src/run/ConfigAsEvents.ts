import { readConfigText } from "@abhed/protocol/ConfigText"
import * as NodeFs from "node:fs"

/**
 * `abhed-ext run abhed.json`, `--config` forgotten: the config would be read as requests, one error line per line of
 * it, and no guard would run. A request always has `event`; a config never does, and has one of these keys.
 */
const ConfigKeys = ["extensions", "policy", "max_rewrite_rounds", "builtin_tools"]

/** Larger files are not read twice to find out: no config is that big, a recorded session may be. */
const MaxBytes = 1024 * 1024

/** The usage problem when the events file given is a config, else undefined (a FIFO or pipe is never read here). */
export const configAsEvents = (file: string, configGiven: boolean): string | undefined => {
  let value: unknown
  try {
    const stats = NodeFs.statSync(file)
    if (!stats.isFile() || stats.size > MaxBytes) return undefined
    value = readConfigText(NodeFs.readFileSync(file, "utf8")).value
  } catch {
    return undefined // unreadable: the run says so when it reads it
  }
  if (typeof value !== "object" || value === null || Array.isArray(value) || "event" in value) return undefined
  const key = ConfigKeys.find((k) => k in value)
  if (key === undefined) return undefined
  const what = `${file} is a config (it has "${key}"), not events (one JSON request per line)`
  return configGiven
    ? `${what}: give the requests as EVENTS.jsonl, or on stdin`
    : `${what}: to run its extensions, name it with --config: abhed-ext run --config ${file} [EVENTS.jsonl]`
}
