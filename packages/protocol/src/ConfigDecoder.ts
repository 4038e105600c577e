import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { Config } from "./Config.ts"
import { ConfigError, type ConfigIssue } from "./ConfigError.ts"
import { renderPath, schemaProblems } from "./ConfigIssues.ts"
import { ConfigFile } from "./ConfigSchema.ts"
import { MaxDepth, pathKey, readConfigText, type Span } from "./ConfigText.ts"
import { isJsonObject } from "./Json.ts"

/**
 * Decoding `abhed.json` (docs/design.md#configuration) into the defaulted `Config`: the `ConfigFile` Schema decides
 * what is valid and fills in the defaults, ConfigIssues.ts words its issues (path and fix), and every problem is
 * reported at once, in document order. Relations between items (unique names, unique events) are checked once the items
 * themselves are valid.
 */

const decodeFile = Schema.decodeUnknownResult(ConfigFile)

/** Where the parts of the input are: spans of values and of object keys, as offsets (text) or visit order (value). */
interface Spans {
  readonly values: ReadonlyMap<string, Span>
  readonly keys: ReadonlyMap<string, Span>
}

interface Placed {
  readonly issue: ConfigIssue
  /** Sort key: the problem's place in the document. */
  readonly order: number
}

/**
 * The Schema's verdict on a value, each problem placed by the spans (and given a line and column by `where`). The
 * spans are asked for only when there is a problem to place: a valid config, the common case, needs none.
 */
const decodeWith = (
  input: unknown,
  spansOf: () => Spans,
  where?: (offset: number) => { readonly line: number; readonly column: number },
  within?: ReadonlyArray<PropertyKey>
): Result.Result<Config, ReadonlyArray<Placed>> => {
  const decoded = decodeFile(input, { errors: "all", onExcessProperty: "error", reportInput: true })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  const spans = spansOf()
  const under = (path: ReadonlyArray<PropertyKey>) => within === undefined || within.every((k, i) => path[i] === k)
  return Result.fail(
    schemaProblems(decoded.failure.issue)
      .filter((p) => under(p.path))
      .map((problem) => {
        // A problem is placed at its key (for a member of an object) or value; a missing key at its object. Problems
        // are listed in the order of these places (a missing key first among its object's problems).
        const path = problem.missingKey ? problem.path.slice(0, -1) : problem.path
        let span: Span | undefined
        for (let n = path.length; span === undefined && n >= 0; n--) {
          const prefix = pathKey(path.slice(0, n))
          span =
            (n === path.length && !problem.missingKey ? spans.keys.get(prefix) : undefined) ?? spans.values.get(prefix)
        }
        const start = span?.start ?? 0
        const at = where?.(start)
        return {
          order: start,
          issue: { path: renderPath(problem.path), message: problem.message, ...(at === undefined ? {} : at) }
        }
      })
  )
}

const inOrder = (placed: ReadonlyArray<Placed>): ReadonlyArray<ConfigIssue> =>
  // Array.prototype.sort is stable: problems at one place keep the Schema's order.
  [...placed].sort((a, b) => a.order - b.order).map((p) => p.issue)

/** Visit order of every part of a value (keys in insertion order = document order for parsed JSON). */
const valueSpans = (input: unknown): Spans => {
  const values = new Map<string, Span>()
  const keys = new Map<string, Span>()
  let next = 0
  const visit = (u: unknown, path: ReadonlyArray<PropertyKey>): void => {
    const start = next++
    // Problems are never deeper than the Schema; junk nested deeper is not walked (nor can it overflow the stack).
    if (path.length < MaxDepth) {
      if (Array.isArray(u)) u.forEach((item, i) => visit(item, [...path, i]))
      else if (isJsonObject(u)) {
        for (const key of Object.keys(u)) {
          const keyStart = next
          visit(u[key], [...path, key])
          keys.set(pathKey([...path, key]), { start: keyStart, end: next })
        }
      }
    }
    values.set(pathKey(path), { start, end: next++ })
  }
  visit(input, [])
  return { values, keys }
}

/** Decode an already-parsed `abhed.json` value. Fails with every problem found, in document order (no lines). */
export const decodeConfig = (input: unknown): Result.Result<Config, ConfigError> =>
  Result.mapError(
    decodeWith(input, () => valueSpans(input)),
    (placed) => new ConfigError({ issues: inOrder(placed) })
  )

/**
 * Parse and decode `abhed.json` text (JSON with comments; see ConfigText.ts). A syntax error, a trailing comma and
 * a repeated key are `ConfigError`s too; every issue carries its line and column. A leading BOM is skipped.
 */
export const parseConfig = (text: string): Result.Result<Config, ConfigError> => {
  const read = readConfigText(text)
  const { where } = read
  const fromText: ReadonlyArray<Placed> = read.problems.map((p) => ({
    order: p.offset,
    issue: { path: renderPath(p.path), message: p.message, ...where(p.offset) }
  }))
  if (read.value === undefined) return Result.fail(new ConfigError({ issues: inOrder(fromText) }))
  const decoded = decodeWith(read.value, () => read, where)
  if (Result.isSuccess(decoded) && fromText.length === 0) return Result.succeed(decoded.success)
  const fromSchema = Result.isFailure(decoded) ? decoded.failure : []
  // The values repeated keys replaced are checked too: each in the document as it would be with it kept.
  const fromReplaced = read.replaced.flatMap((view) => {
    const r = decodeWith(view.value, () => view, where, view.path)
    return Result.isFailure(r) ? r.failure : []
  })
  return Result.fail(new ConfigError({ issues: inOrder([...fromText, ...fromSchema, ...fromReplaced]) }))
}
