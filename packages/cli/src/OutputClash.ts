import { Effect } from "effect"
import * as NodeFs from "node:fs"

/**
 * A report a command writes (`test --junit FILE`, `audit --html FILE`) onto a file the same command reads: its
 * cases, its config, the audit it reports on (a file, or stdin redirected from it). Written, the report would
 * replace them, and the cases, the policy or the audit trail would be lost to a slip of tab completion. Files are
 * compared by device and inode, so a second name or a link is caught too.
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

/** A file the command reads (`-`: stdin), and what it is to the user: "the cases file". */
export interface ReadFile {
  readonly file: string
  readonly role: string
}

/** Why writing `out` (given as `flag`) would destroy a file read (a phrase for the usage error), or undefined. */
export const outputClash = (
  flag: string,
  out: string,
  reads: ReadonlyArray<ReadFile>
): Effect.Effect<string | undefined> =>
  Effect.sync(() => {
    const target = identity(() => NodeFs.statSync(out))
    if (target === undefined) return undefined
    const hit = reads.find(({ file }) => {
      const read = identity(() => (file === "-" ? NodeFs.fstatSync(0) : NodeFs.statSync(file)))
      return read !== undefined && read.dev === target.dev && read.ino === target.ino
    })
    return hit === undefined
      ? undefined
      : `${flag} ${out} is ${hit.role}${hit.file === "-" ? " (stdin)" : ""}: the report would overwrite it`
  })
