import type { HookFormat } from "../hook/HookFormat.ts"

/**
 * Environment references in a peer's MCP server entry, and the shell words that keep them references.
 *
 * - Claude Code expands `${VAR}` and `${VAR:-default}` in an entry's `command`, `args`, `env`, `url` and `headers`;
 *   a bare `$VAR` stays as it is (code.claude.com/docs/en/mcp, "Environment variable expansion in .mcp.json").
 * - Gemini CLI expands `$VAR` and `${VAR}` in the string values of its settings (geminicli.com/docs/tools/mcp-server,
 *   `env`: "Values can reference environment variables using `$VAR_NAME` or `${VAR_NAME}` syntax").
 *
 * A reference is carried over as the variable's name, never its value: the value is read when the server starts,
 * from the environment the extension is given (`env_passthrough`).
 */

export type Piece =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Ref"; readonly name: string; readonly fallback: string | undefined }

/** A variable name a shell can expand and `env_passthrough` passes as exactly that name (no `*`: not a glob). */
const VariableName = /^[A-Za-z_][A-Za-z0-9_]*$/

const claudeRef = /\$\{([^}]*)\}/g
const geminiRef = /\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([^}]*)\})/g

/** `value` cut into literal text and references, with `format`'s syntax. A `${…}` that names no variable is text. */
export const piecesOf = (format: HookFormat, value: string): ReadonlyArray<Piece> => {
  const pieces: Array<Piece> = []
  let last = 0
  const text = (upTo: number) => {
    if (upTo > last) pieces.push({ _tag: "Text", text: value.slice(last, upTo) })
  }
  for (const match of value.matchAll(format === "claude" ? claudeRef : geminiRef)) {
    const inner = match[1] ?? match[2] ?? ""
    const cut = format === "claude" ? inner.indexOf(":-") : -1
    const name = cut === -1 ? inner : inner.slice(0, cut)
    if (!VariableName.test(name)) continue
    text(match.index)
    pieces.push({ _tag: "Ref", name, fallback: cut === -1 ? undefined : inner.slice(cut + 2) })
    last = match.index + match[0].length
  }
  text(value.length)
  return pieces
}

export const refsOf = (pieces: ReadonlyArray<Piece>): ReadonlyArray<string> =>
  pieces.flatMap((p) => (p._tag === "Ref" ? [p.name] : []))

export const hasRefs = (pieces: ReadonlyArray<Piece>): boolean => pieces.some((p) => p._tag === "Ref")

export const isVariableName = (name: string): boolean => VariableName.test(name)

/** The single reference `${NAME}` (or `$NAME`) and nothing else. */
export const onlyRef = (pieces: ReadonlyArray<Piece>): (Piece & { readonly _tag: "Ref" }) | undefined => {
  const [first, ...rest] = pieces
  return first?._tag === "Ref" && rest.length === 0 ? first : undefined
}

/** `'text'`, for sh: nothing in single quotes is special but the quote itself. A plain word stays bare. */
const singleQuoted = (text: string): string =>
  /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`

/** A fallback inside `"${NAME:-…}"`: the characters double quotes still treat specially, escaped. */
const inDoubleQuotes = (text: string): string => text.replace(/[\\"$`]/g, "\\$&")

/**
 * One sh word that is the pieces joined: literal text single-quoted, each reference double-quoted (`"${NAME}"`,
 * `"${NAME:-fallback}"`, sh's own syntax for Claude's default), so that a value is never split or globbed.
 */
export const shellWord = (pieces: ReadonlyArray<Piece>): string =>
  pieces.length === 0
    ? "''"
    : pieces
        .map((p) =>
          p._tag === "Text"
            ? singleQuoted(p.text)
            : p.fallback === undefined
              ? `"\${${p.name}}"`
              : `"\${${p.name}:-${inDoubleQuotes(p.fallback)}}"`
        )
        .join("")

/** The pieces written back as text the adapter expands when it starts: `${NAME}`, `${NAME:-fallback}`. */
export const braced = (pieces: ReadonlyArray<Piece>): string =>
  pieces
    .map((p) =>
      p._tag === "Text" ? p.text : p.fallback === undefined ? `\${${p.name}}` : `\${${p.name}:-${p.fallback}}`
    )
    .join("")

/**
 * Literal values shaped like credentials: provider tokens (GitHub, OpenAI and Anthropic style `sk-`, Slack, AWS
 * access key ids, GitLab, Google API keys), JWTs, a URL with a password, an `Authorization` value with its scheme.
 */
const secretValues: ReadonlyArray<RegExp> = [
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/,
  /\bsk-[A-Za-z0-9_-]{16,}/,
  /\bxox[abposr]-[A-Za-z0-9-]{8,}/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /\bglpat-[A-Za-z0-9_-]{16,}/,
  /\bAIza[0-9A-Za-z_-]{30,}/,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}/,
  /:\/\/[^/\s:@]+:[^/\s@]+@/,
  /^\s*(?:Bearer|Basic|token)\s+\S/i
]

/**
 * The literal text of `pieces`: its text, and each reference's default (`${VAR:-default}`), which is written into
 * the config as it is and sent whenever the variable is unset, so it is as literal as the text around it.
 */
const literals = (pieces: ReadonlyArray<Piece>): ReadonlyArray<string> =>
  pieces.flatMap((p) => (p._tag === "Text" ? [p.text] : p.fallback === undefined ? [] : [p.fallback]))

/** Literal text in `pieces`, defaults included, that looks like a credential. */
export const looksLikeSecretValue = (pieces: ReadonlyArray<Piece>): boolean =>
  literals(pieces).some((text) => secretValues.some((shape) => shape.test(text)))

/** A reference with a default that is not empty: a literal value, should the variable be unset. */
export const hasLiteralDefault = (pieces: ReadonlyArray<Piece>): boolean =>
  pieces.some((p) => p._tag === "Ref" && p.fallback !== undefined && p.fallback !== "")

/** The text as sent when no variable is set: each reference its default, or nothing. */
export const withDefaults = (pieces: ReadonlyArray<Piece>): string =>
  pieces.map((p) => (p._tag === "Text" ? p.text : (p.fallback ?? ""))).join("")

/** A URL's query parameter that carries a credential (`?api_key=…`, `&token=…`) with a literal value. */
export const secretQueryParameter = (url: string, secretName: (name: string) => boolean): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return undefined
  }
  for (const [name, value] of parsed.searchParams) {
    if (value !== "" && secretName(name.replaceAll("-", "_"))) return name
  }
  return undefined
}
