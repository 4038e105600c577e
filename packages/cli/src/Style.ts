/**
 * ANSI styling, on only when stdout is a terminal: piped output stays plain text that scripts and tests can read.
 */
export interface Style {
  readonly green: (s: string) => string
  readonly red: (s: string) => string
  readonly yellow: (s: string) => string
  readonly dim: (s: string) => string
  readonly bold: (s: string) => string
  readonly cyan: (s: string) => string
}

const wrap = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`

export const colour: Style = {
  green: wrap(32, 39),
  red: wrap(31, 39),
  yellow: wrap(33, 39),
  dim: wrap(2, 22),
  bold: wrap(1, 22),
  cyan: wrap(36, 39)
}

const id = (s: string) => s
export const plain: Style = { green: id, red: id, yellow: id, dim: id, bold: id, cyan: id }

export const styleFor = (isTerminal: boolean): Style => (isTerminal ? colour : plain)
