import { Effect } from "effect"
import * as NodeFs from "node:fs"

/**
 * `test --junit FILE` where FILE is what the run reads: its cases (a file, or stdin redirected from it) or its config.
 * The report would overwrite them, and the cases or the policy would be lost to a slip of tab completion. Files
 * are compared by device and inode, so a second name or a link is caught too.
 */

type Identity = { readonly dev: number; readonly ino: number }

const identity = (stat: () => NodeFs.Stats): Identity | undefined => {
  try {
    const { dev, ino } = stat()
    return { dev, ino }
  } catch {
    // Missing or unreadable: no clash (reading or writing it says what is wrong with it).
    return undefined
  }
}

const same = (a: Identity | undefined, b: Identity | undefined) =>
  a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino

/** What `junit` would overwrite (a phrase for the usage error), or undefined. */
export const junitClash = (junit: string, cases: string, config: string): Effect.Effect<string | undefined> =>
  Effect.sync(() => {
    const file = identity(() => NodeFs.statSync(junit))
    if (file === undefined) return undefined
    const casesFile = identity(() => (cases === "-" ? NodeFs.fstatSync(0) : NodeFs.statSync(cases)))
    if (same(file, casesFile)) {
      return `--junit ${junit} is the cases file${cases === "-" ? " (stdin)" : ""}: the report would overwrite the cases`
    }
    if (
      config !== "-" &&
      same(
        file,
        identity(() => NodeFs.statSync(config))
      )
    ) {
      return `--junit ${junit} is the config file: the report would overwrite the config`
    }
    return undefined
  })
