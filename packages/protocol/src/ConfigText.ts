import { createScanner, type Node, parseTree, printParseErrorCode, type ParseError } from "jsonc-parser"

/**
 * The text of `abhed.json` (docs/design.md#configuration): JSON with comments (JSONC), read with a real tokenizer
 * (`jsonc-parser`, VS Code's) instead of `JSON.parse`, so that
 * - a key repeated in one object is a problem naming both lines, not a silent replacement of the first (a
 *   second `"extensions": []` lower in the file must not remove every guard);
 * - every problem has a line and column;
 * - `//` and `/* *\/` comments are allowed. Trailing commas are not (they are a problem each, with its
 *   position): the file stays JSON plus comments, as editors' "JSON with Comments" mode reads it.
 * A leading byte order mark is skipped.
 */

/** A problem in the text, at a character offset (after the byte order mark). */
export interface TextProblem {
  readonly offset: number
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Where a value is in the text: `start` of the value (for a key of an object: of the key), `end` after it. */
export interface Span {
  readonly start: number
  readonly end: number
}

/**
 * The document as it would read had one value a repeated key replaced been kept: so the problems inside a replaced
 * value are listed too (they would surface the moment the user deletes the other occurrence).
 */
export interface ReplacedView {
  /** The path of the replaced value: the problems of this view that count are the ones under it. */
  readonly path: ReadonlyArray<PropertyKey>
  readonly value: unknown
  readonly values: ReadonlyMap<string, Span>
  readonly keys: ReadonlyMap<string, Span>
}

/** Replaced values checked: bounds the work on a file that repeats one key thousands of times. */
export const MaxReplacedViews = 100

export interface ConfigText {
  /** The text without its byte order mark: the offsets below are into it. */
  readonly text: string
  /** The value, duplicate keys resolved as `JSON.parse` does (the last one wins), or undefined on a syntax error. */
  readonly value: unknown
  /** Syntax errors (only the first of the parser's, which cascade), trailing commas, repeated keys. */
  readonly problems: ReadonlyArray<TextProblem>
  /** One view per value a repeated key replaced (at most `MaxReplacedViews`), in document order. */
  readonly replaced: ReadonlyArray<ReplacedView>
  /** The span of the value at a path (`pathKey`), and for object members the span of the key. */
  readonly values: ReadonlyMap<string, Span>
  readonly keys: ReadonlyMap<string, Span>
  /** 1-based line and column of an offset into `text` (the line starts are found once, on first use). */
  readonly where: (offset: number) => { readonly line: number; readonly column: number }
}

/** A path as a map key. */
export const pathKey = (path: ReadonlyArray<PropertyKey>): string =>
  JSON.stringify(path.map((k) => (typeof k === "number" ? k : String(k))))

/** Far more than any valid config needs (it nests 6 deep); deeper input is refused before it is parsed. */
export const MaxDepth = 64

/** The text holds comments and whitespace only: the tokenizer, skipping both, finds nothing but the end. */
const onlyComments = (text: string): boolean => {
  const scanner = createScanner(text, true)
  scanner.scan()
  return scanner.getTokenLength() === 0
}

const syntaxMessage = (error: ParseError, text: string): string => {
  const token = text.slice(error.offset, error.offset + Math.max(1, error.length))
  switch (printParseErrorCode(error.error)) {
    case "InvalidSymbol":
      return `unexpected ${JSON.stringify(token)}${token.startsWith("'") ? " (strings and keys take double quotes)" : ""}`
    case "InvalidNumberFormat":
      return "invalid number"
    case "PropertyNameExpected":
      return "expected a key in double quotes"
    case "ValueExpected":
      return text.trim() === ""
        ? "the file is empty (a config with nothing in it is {})"
        : onlyComments(text)
          ? "the file is empty (only comments; a config with nothing in it is {})"
          : "expected a value"
    case "ColonExpected":
      return 'expected ":" after the key'
    case "CommaExpected":
      return 'expected "," before this'
    case "CloseBraceExpected":
      return 'expected "}"'
    case "CloseBracketExpected":
      return 'expected "]"'
    case "EndOfFileExpected":
      return "unexpected text after the end of the config (a file holds one object)"
    case "InvalidCommentToken":
      return "invalid comment"
    case "UnexpectedEndOfComment":
      return "unterminated /* comment"
    case "UnexpectedEndOfString":
      return "unterminated string (a string ends on its line; write \\n for a newline)"
    case "UnexpectedEndOfNumber":
      return "incomplete number"
    case "InvalidUnicode":
      return "invalid \\u escape"
    case "InvalidEscapeCharacter":
      return "invalid escape in a string"
    case "InvalidCharacter":
      return "control character in a string (escape it)"
    default:
      return "invalid syntax"
  }
}

/**
 * One pass of the tokenizer (iterative, so any depth is safe): trailing commas, and the first place the nesting
 * goes deeper than `MaxDepth`.
 */
const scan = (
  text: string
): { readonly trailingCommas: ReadonlyArray<number>; readonly tooDeep: number | undefined } => {
  const scanner = createScanner(text, true)
  const trailingCommas: Array<number> = []
  let depth = 0
  let tooDeep: number | undefined
  let comma: number | undefined
  for (;;) {
    scanner.scan()
    const offset = scanner.getTokenOffset()
    if (scanner.getTokenLength() === 0) break // the end (every other token has a character)
    const c = text[offset]
    if (c === "}" || c === "]") {
      if (comma !== undefined) trailingCommas.push(comma)
      depth--
    } else if (c === "{" || c === "[") {
      depth++
      if (depth > MaxDepth && tooDeep === undefined) tooDeep = offset
    }
    comma = c === "," ? offset : undefined
  }
  return { trailingCommas, tooDeep }
}

const lineOf = (starts: ReadonlyArray<number>, offset: number): number => {
  let lo = 0
  let hi = starts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if ((starts[mid] ?? 0) <= offset) lo = mid
    else hi = mid - 1
  }
  return lo
}

/**
 * 1-based line and column of a character offset (a line ends at \n, \r\n or \r, as in the tokenizer). The line
 * starts are found on the first call: a valid config, the common case, never asks.
 */
const lineColumn = (text: string): ((offset: number) => { readonly line: number; readonly column: number }) => {
  let starts: Array<number> | undefined
  return (offset) => {
    if (starts === undefined) {
      starts = [0]
      for (let i = 0; i < text.length; i++) {
        const c = text[i]
        if (c === "\n" || (c === "\r" && text[i + 1] !== "\n")) starts.push(i + 1)
      }
    }
    const line = lineOf(starts, offset)
    return { line: line + 1, column: offset - (starts[line] ?? 0) + 1 }
  }
}

const lines = (a: number, b: number): string => (a === b ? `twice on line ${a}` : `on lines ${a} and ${b}`)

/** Read `abhed.json` text: the value, where each part of it is, and the problems of the text itself. */
export const readConfigText = (raw: string): ConfigText => {
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw
  const { tooDeep, trailingCommas } = scan(text)
  const values = new Map<string, Span>()
  const keys = new Map<string, Span>()
  const where = lineColumn(text)
  if (tooDeep !== undefined) {
    const message = `nested more than ${MaxDepth} levels deep (a config needs 6)`
    return {
      text,
      value: undefined,
      problems: [{ offset: tooDeep, path: [], message }],
      replaced: [],
      values,
      keys,
      where
    }
  }
  const errors: Array<ParseError> = []
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false })
  const commas = trailingCommas.map((offset) => ({
    offset,
    path: [],
    message: "trailing comma (abhed.json allows comments, not trailing commas): remove it"
  }))
  const [firstError] = errors
  if (firstError !== undefined || tree === undefined) {
    // After the first error the parser guesses, and its further errors mostly follow from the guess.
    const first =
      firstError === undefined
        ? []
        : [{ offset: firstError.offset, path: [], message: `invalid JSON: ${syntaxMessage(firstError, text)}` }]
    const problems = [...commas.filter((c) => firstError === undefined || c.offset < firstError.offset), ...first]
    return { text, value: undefined, problems, replaced: [], values, keys, where }
  }
  const problems: Array<TextProblem> = [...commas]
  const replacedAt: Array<{ readonly path: ReadonlyArray<PropertyKey>; readonly forced: ReadonlySet<Node> }> = []
  /**
   * The value of the tree with, for each repeated key, the occurrence in `forced` (else the last, as `JSON.parse`
   * keeps). The main pass (`forced` undefined) walks every occurrence, to find the repeats at any depth.
   */
  const build = (forced: ReadonlySet<Node> | undefined) => {
    const values = new Map<string, Span>()
    const keys = new Map<string, Span>()
    const valueOf = (node: Node, path: ReadonlyArray<PropertyKey>, above: ReadonlyArray<Node>): unknown => {
      values.set(pathKey(path), { start: node.offset, end: node.offset + node.length })
      const children = node.children ?? []
      switch (node.type) {
        case "object": {
          const byKey = new Map<string, Array<Node>>()
          for (const property of children) {
            const key: unknown = property.children?.[0]?.value
            if (typeof key !== "string") continue
            byKey.set(key, [...(byKey.get(key) ?? []), property])
          }
          const entries: Array<[string, unknown]> = []
          for (const [key, occurrences] of byKey) {
            const at = [...path, key]
            const chosen = occurrences.find((p) => forced?.has(p) === true) ?? occurrences[occurrences.length - 1]
            let value: unknown
            for (const property of forced === undefined ? occurrences : [chosen]) {
              const [keyNode, valueNode] = property?.children ?? []
              if (property === undefined || keyNode === undefined) continue
              const v = valueNode === undefined ? undefined : valueOf(valueNode, at, [...above, property])
              if (property === chosen) value = v
            }
            if (forced === undefined) {
              occurrences.forEach((property, i) => {
                const previous = occurrences[i - 1]
                if (previous === undefined) return
                const line = (p: Node) => where(p.children?.[0]?.offset ?? p.offset).line
                problems.push({
                  offset: property.children?.[0]?.offset ?? property.offset,
                  path: at,
                  message:
                    `duplicate key ${JSON.stringify(key)} ${lines(line(previous), line(property))}: ` +
                    "a repeated key would silently replace the first; keep one"
                })
              })
              for (const property of occurrences.slice(0, -1))
                replacedAt.push({ path: at, forced: new Set([...above, property]) })
            }
            if (chosen !== undefined)
              keys.set(pathKey(at), {
                start: chosen.children?.[0]?.offset ?? chosen.offset,
                end: chosen.offset + chosen.length
              })
            // fromEntries defines own data properties: a "__proto__" key stays a plain key.
            entries.push([key, value])
          }
          return Object.fromEntries(entries)
        }
        case "array":
          return children.map((child, i) => valueOf(child, [...path, i], above))
        default: {
          const value: unknown = node.value
          return value
        }
      }
    }
    return { value: valueOf(tree, [], []), values, keys }
  }
  const main = build(undefined)
  const ordered = replacedAt.sort((a, b) => offsetOf(a.forced) - offsetOf(b.forced))
  const replaced = ordered.slice(0, MaxReplacedViews).map(({ forced, path }) => ({ path, ...build(forced) }))
  const unchecked = ordered[MaxReplacedViews]
  if (unchecked !== undefined) {
    problems.push({
      offset: offsetOf(unchecked.forced),
      path: unchecked.path,
      message:
        `${ordered.length - MaxReplacedViews} value(s) replaced by repeated keys, from here on, were not checked ` +
        `(only the first ${MaxReplacedViews} are): remove the repeated keys`
    })
  }
  return { text, value: main.value, problems, replaced, values: main.values, keys: main.keys, where }
}

/** Where the deepest forced occurrence starts (the replaced value itself; its ancestors start before it). */
const offsetOf = (forced: ReadonlySet<Node>): number => Math.max(...[...forced].map((n) => n.offset))
