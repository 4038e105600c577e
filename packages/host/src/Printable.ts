/**
 * Text an extension wrote (its stderr, its stray stdout), made safe to show on a terminal: every control character
 * is shown escaped, so the text cannot drive the terminal (set its title, clear the screen over the lines that
 * matter, write the clipboard with OSC 52, move the cursor back over a line with a carriage return) or reorder what
 * is shown (bidirectional overrides). Escaped: C0 controls but tab, DEL, C1 controls (`\x1b`, `\x7f`, `\u009b`), and
 * the bidirectional formatting characters (`\u202e`) and the invisible ones that hide text (zero-width, `\ufeff`, the
 * line and paragraph separators, the soft hyphen, fillers, variation selectors, tags: `\u{e0041}`). Everything else,
 * unicode included, is shown as it is. Cut the text into lines first: a line break left in it is shown as `\n` or
 * `\r`.
 */
export const printable = (text: string): string =>
  text.replace(
    // Invisible too: the soft hyphen, the fillers and variation selectors that render as nothing or as a blank, and
    // the tag characters (U+E0000..E007F), which spell ASCII no terminal shows: `guard.sh` plus tags is another file.
    // biome-ignore lint/suspicious/noMisleadingCharacterClass: the combining ones are matched alone, to be escaped
    /[\x00-\x08\x0a-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/gu,
    (c) => {
      const code = c.codePointAt(0) ?? 0
      return code < 0x80
        ? `\\x${code.toString(16).padStart(2, "0")}`
        : code > 0xffff
          ? `\\u{${code.toString(16)}}`
          : `\\u${code.toString(16).padStart(4, "0")}`
    }
  )

/** The lines of `text` as shown: cut at every line break (`\r\n`, `\n`, and a lone `\r`), each `printable`. */
export const printableLines = (text: string): ReadonlyArray<string> => text.split(/\r\n|\r|\n/).map(printable)
