import { Effect } from "effect"
import * as NodeFs from "node:fs"
import { identity, sameFile } from "./FileIdentity.ts"

/**
 * A report a command writes (`test --junit FILE`, `audit --html FILE`) onto a file the same command reads: its
 * cases, its config, the audit it reports on (a file, or stdin redirected from it). Written, the report would
 * replace them, and the cases, the policy or the audit trail would be lost to a slip of tab completion. Files are
 * compared by device and inode, so a second name or a link is caught too.
 */

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
    const hit = reads.find(({ file }) =>
      sameFile(
        target,
        identity(() => (file === "-" ? NodeFs.fstatSync(0) : NodeFs.statSync(file)))
      )
    )
    return hit === undefined
      ? undefined
      : `${flag} ${out} is ${hit.role}${hit.file === "-" ? " (stdin)" : ""}: the report would overwrite it`
  })
