// Not `import … from "node:util"`: an ES module import of a Node builtin evaluates all of its exports, and node:util's
// lazy ones (TextDecoder and what it loads) cost every start of the CLI about 8 ms of CPU; only styleText is used.
const { styleText } = process.getBuiltinModule("node:util")

/**
 * Text styling for people, off for programs: on when the stream is a terminal, unless `NO_COLOR` is set;
 * `FORCE_COLOR` turns it on (or off, at 0) whatever the stream is. Node's `util.styleText` decides, so the CLI
 * follows the same conventions as Node itself; piped output stays plain text that scripts and tests can read.
 */
export interface Style {
  readonly green: (s: string) => string
  readonly red: (s: string) => string
  readonly yellow: (s: string) => string
  readonly dim: (s: string) => string
  readonly bold: (s: string) => string
  readonly cyan: (s: string) => string
}

type Format = Parameters<typeof styleText>[0]

// validateStream: false styles unconditionally; whether to style at all is decided once, by `colourOn`.
const wrap = (format: Format) => (s: string) => styleText(format, s, { validateStream: false })

export const colour: Style = {
  green: wrap("green"),
  red: wrap("red"),
  yellow: wrap("yellow"),
  dim: wrap("dim"),
  bold: wrap("bold"),
  cyan: wrap("cyan")
}

const id = (s: string) => s
export const plain: Style = { green: id, red: id, yellow: id, dim: id, bold: id, cyan: id }

/** Whether text written to `stream` should be styled: `util.styleText`'s own rule (TTY, NO_COLOR, FORCE_COLOR). */
export const colourOn = (stream: NodeJS.WriteStream): boolean => styleText("bold", "x", { stream }) !== "x"

/** The style for text written to `stream` (default stdout). */
export const styleFor = (stream: NodeJS.WriteStream = process.stdout): Style => (colourOn(stream) ? colour : plain)
