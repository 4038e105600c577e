/**
 * JSON text as the CLI prints it: the same value, with every character that could deceive a terminal or a line
 * reader written as its `\uXXXX` escape. A record or a reply can hold them raw: JSON allows the C1 controls
 * (U+0080–U+009F: U+009B is a CSI some terminals obey, U+0085 a line break to some readers), the bidirectional
 * controls (U+202E shows what follows reversed), the invisible ones (zero-width spaces and joiners, U+2060–U+2064,
 * a BOM) and U+2028/U+2029 in a string. They can stand only inside its strings (anywhere else the text is not JSON),
 * where an escape reads back as the same character: `JSON.parse` of the line is unchanged, its bytes are not a
 * terminal's instructions. (The C0 controls cannot stand raw in JSON: `JSON.stringify` escapes them already.)
 */
const Deceiving = /[\u0080-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g

const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

/** `text` (JSON) with the characters above escaped. */
export const jsonText = (text: string): string => text.replace(Deceiving, escape)

/** `value` as one line of JSON, printed safe (`jsonText`). */
export const jsonLine = (value: unknown): string => jsonText(JSON.stringify(value))
