/**
 * A Gemini CLI hook's command line as `bash -c` must run it (`import-hooks`). Gemini CLI does not leave
 * `$GEMINI_PROJECT_DIR` and `$CLAUDE_PROJECT_DIR` to the shell: it puts the project folder into the line itself,
 * shell-quoted, before running it. So a Gemini hook may write the variable unquoted (`$GEMINI_PROJECT_DIR/.gemini/hooks/
 * guard.sh`) and still run in a folder whose path has a space; under `bash -c` the same line would split the path into
 * words, and the guard would fail to start on every call. Here each such variable outside double quotes is quoted
 * (`"$GEMINI_PROJECT_DIR"`; inside single quotes, where the shell would not expand it, `'"$GEMINI_PROJECT_DIR"'`), so
 * that bash expands it to the one word Gemini CLI would have written. Inside double quotes it is left as it is: the
 * shell already expands it to one word there.
 */

const projectVariable = /^\$(GEMINI_PROJECT_DIR|CLAUDE_PROJECT_DIR)(?![A-Za-z0-9_])/

export const quoteProjectDir = (line: string): string => {
  let out = ""
  let quote: "'" | '"' | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? ""
    if (quote !== "'" && c === "\\") {
      // An escaped character is literal, `\$GEMINI_PROJECT_DIR` too.
      out += line.slice(i, i + 2)
      i++
      continue
    }
    if (c === "'" && quote !== '"') quote = quote === "'" ? undefined : "'"
    else if (c === '"' && quote !== "'") quote = quote === '"' ? undefined : '"'
    else if (c === "$" && quote !== '"') {
      const found = projectVariable.exec(line.slice(i))
      if (found !== null) {
        out += quote === "'" ? `'"${found[0]}"'` : `"${found[0]}"`
        i += found[0].length - 1
        continue
      }
    }
    out += c
  }
  return out
}
