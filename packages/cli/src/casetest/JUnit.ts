/**
 * The JUnit XML report of `abhed-ext test --junit` (docs/cli.md#abhed-ext-test): the format CI systems read (GitLab,
 * GitHub Actions' reporters, Jenkins): one `<testsuite>` per cases file, one `<testcase>` per case, a `<failure>` in
 * each that failed. Pure: results in, the document out.
 */
export interface JUnitCase {
  readonly name: string
  /** The cases file, as given: the CI groups cases by it. */
  readonly classname: string
  readonly seconds: number
  /** Absent when the case passed. */
  readonly failure?: { readonly message: string; readonly type: string; readonly detail: string } | undefined
}

export interface JUnitSuite {
  readonly name: string
  readonly timestamp: string
  readonly seconds: number
  readonly cases: ReadonlyArray<JUnitCase>
}

/**
 * XML 1.0 cannot hold some characters at all, escaped or not (most C0 controls, lone surrogates, U+FFFE/U+FFFF):
 * they are written as `\u{…}` so that a case named with one still gives a document every parser reads. The
 * five markup characters are escaped everywhere (attribute values and text alike), and so is whitespace a parser
 * would change (line breaks and tabs in attributes, carriage returns anywhere).
 */
export const escapeXml = (text: string, inAttribute = true): string => {
  let out = ""
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0
    const allowed =
      code === 0x9 ||
      code === 0xa ||
      code === 0xd ||
      (code >= 0x20 && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      code >= 0x10000
    if (!allowed) out += `\\u{${code.toString(16)}}`
    else if (ch === "&") out += "&amp;"
    else if (ch === "<") out += "&lt;"
    else if (ch === ">") out += "&gt;"
    else if (ch === '"') out += "&quot;"
    else if (ch === "'") out += "&apos;"
    // A line break or a tab in an attribute value would be read back as a space (attribute normalization), a
    // carriage return in text as a line feed (line-end handling): kept as references. A line feed in text stays.
    else if (inAttribute && ch === "\n") out += "&#10;"
    else if (inAttribute && ch === "\t") out += "&#9;"
    else if (ch === "\r") out += "&#13;"
    else out += ch
  }
  return out
}

const seconds = (s: number): string => s.toFixed(3)

export const renderJUnit = (suites: ReadonlyArray<JUnitSuite>): string => {
  const count = (f: (c: JUnitCase) => boolean) => suites.reduce((n, s) => n + s.cases.filter(f).length, 0)
  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="abhed-ext test" tests="${count(() => true)}" failures="${count((c) => c.failure !== undefined)}" ` +
      `errors="0" time="${seconds(suites.reduce((t, s) => t + s.seconds, 0))}">`
  ]
  for (const suite of suites) {
    const failures = suite.cases.filter((c) => c.failure !== undefined).length
    lines.push(
      `  <testsuite name="${escapeXml(suite.name)}" tests="${suite.cases.length}" failures="${failures}" errors="0" ` +
        `skipped="0" timestamp="${escapeXml(suite.timestamp)}" time="${seconds(suite.seconds)}">`
    )
    for (const c of suite.cases) {
      const open = `    <testcase name="${escapeXml(c.name)}" classname="${escapeXml(c.classname)}" time="${seconds(c.seconds)}"`
      if (c.failure === undefined) {
        lines.push(`${open}/>`)
      } else {
        lines.push(
          `${open}>`,
          `      <failure message="${escapeXml(c.failure.message)}" type="${escapeXml(c.failure.type)}">` +
            `${escapeXml(c.failure.detail, false)}</failure>`,
          "    </testcase>"
        )
      }
    }
    lines.push("  </testsuite>")
  }
  lines.push("</testsuites>")
  return `${lines.join("\n")}\n`
}
