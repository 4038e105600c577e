import { Effect } from "effect"
import * as NodeFs from "node:fs"
import { identity, sameFile } from "../FileIdentity.ts"

/**
 * `run --audit FILE` where FILE is also what the run reads: its events (a file, or stdin redirected from it) or its
 * config. Appending to the events it reads, the run would read its own records back as events, decide them and
 * record them again, without end, until the disk is full; appending to its config corrupts it (and under `--watch`
 * reloads it at every record). Files are compared by device and inode, so a second name or a link is caught too.
 */

/** The role `audit` clashes with (a phrase for the usage error), or undefined. */
export const auditClash = (
  audit: string,
  events: string,
  config: string | undefined
): Effect.Effect<string | undefined> =>
  Effect.sync(() => {
    const file = identity(() => NodeFs.lstatSync(audit))
    if (file === undefined) return undefined
    if (
      events === "-"
        ? sameFile(
            file,
            identity(() => NodeFs.fstatSync(0))
          )
        : sameFile(
            file,
            identity(() => NodeFs.statSync(events))
          )
    ) {
      return `--audit ${audit} is the file the events are read from${events === "-" ? " (stdin)" : ""}: its records would be read back as events, and recorded again, without end`
    }
    if (
      config !== undefined &&
      config !== "-" &&
      sameFile(
        file,
        identity(() => NodeFs.statSync(config))
      )
    ) {
      return `--audit ${audit} is the config file: its records would be appended to the config`
    }
    return undefined
  })
