import type * as NodeFs from "node:fs"

/**
 * A file as the kernel knows it (device and inode), so that a second name or a link to a file is the same file: how
 * `run --audit`, `test --junit` and `audit --html` tell that what they would write is what they read.
 */
export interface Identity {
  readonly dev: number
  readonly ino: number
}

/** The identity `stat` reads, or undefined when the file is missing or unreadable (its own open says why). */
export const identity = (stat: () => NodeFs.Stats): Identity | undefined => {
  try {
    const { dev, ino } = stat()
    return { dev, ino }
  } catch {
    return undefined
  }
}

/** Are both known, and the same file? */
export const sameFile = (a: Identity | undefined, b: Identity | undefined): boolean =>
  a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino
