import { isJsonObject, type JsonObject } from "@abhed/protocol"
import { renderPath, schemaProblems } from "@abhed/protocol/ConfigIssues"
import { Result, Schema } from "effect"

/**
 * One line of an `abhed-ext test` cases file (docs/cli.md#abhed-ext-test): a tool call and the decision that must come
 * of it, or a tool result and the content / is_error that must come of it. Pure: text in, a case or a one-line reason
 * out. Unknown keys are errors: a misspelt `"expet"` must not turn a case into one that checks nothing.
 */

const Args = Schema.Record(Schema.String, Schema.Unknown)
const By = Schema.Union([Schema.String, Schema.Array(Schema.String)]).annotate({
  expected: "an extension's name or a list of names"
})

const Decisions: ReadonlyArray<string> = ["allow", "ask", "deny"]

const CallCaseSchema = Schema.Struct({
  name: Schema.optionalKey(Schema.String),
  call: Schema.Struct({ tool: Schema.String, args: Args, call_id: Schema.optionalKey(Schema.String) }),
  expect: Schema.Literals(["allow", "ask", "deny"]),
  by: Schema.optionalKey(By),
  args: Schema.optionalKey(Args),
  failing: Schema.optionalKey(By)
})

const ResultCaseSchema = Schema.Struct({
  name: Schema.optionalKey(Schema.String),
  tool_result: Schema.Struct({
    tool: Schema.String,
    args: Args,
    content: Schema.String,
    is_error: Schema.optionalKey(Schema.Boolean),
    call_id: Schema.optionalKey(Schema.String)
  }),
  content: Schema.optionalKey(Schema.String),
  is_error: Schema.optionalKey(Schema.Boolean),
  by: Schema.optionalKey(By),
  failing: Schema.optionalKey(By)
})

const CallCaseFields: ReadonlyArray<string> = Object.keys(CallCaseSchema.fields)
const ResultCaseFields: ReadonlyArray<string> = Object.keys(ResultCaseSchema.fields)

export interface CallCase {
  readonly kind: "call"
  readonly name: string | undefined
  readonly tool: string
  readonly args: JsonObject
  readonly callId: string | undefined
  readonly expect: "allow" | "ask" | "deny"
  /** Each must be among the reasons (deny, ask) or the rewriters (allow). */
  readonly by: ReadonlyArray<string>
  /** The settled args that must come out, when given. */
  readonly settled: JsonObject | undefined
  /** The extensions that must fail on the case (a test of their on_failure); any other failure fails it. */
  readonly failing: ReadonlyArray<string>
}

export interface ResultCase {
  readonly kind: "tool_result"
  readonly name: string | undefined
  readonly tool: string
  readonly args: JsonObject
  readonly content: string
  readonly isError: boolean
  readonly callId: string | undefined
  readonly expectContent: string | undefined
  readonly expectIsError: boolean | undefined
  /** Each must have rewritten the content, raised is_error or withheld the result. */
  readonly by: ReadonlyArray<string>
  /** As a call case's. */
  readonly failing: ReadonlyArray<string>
}

export type TestCase = CallCase | ResultCase

const byList = (by: string | ReadonlyArray<string> | undefined): ReadonlyArray<string> =>
  by === undefined ? [] : typeof by === "string" ? [by] : by

/** Every problem of a case, by its path, in the words of config errors: `call.args: must be an object, got "x"`. */
const problemsOf = (issue: Parameters<typeof schemaProblems>[0]): string =>
  schemaProblems(issue)
    .map((p) => `${renderPath(p.path)}: ${p.message}`)
    .join("; ")

const strict = { errors: "all", onExcessProperty: "error", reportInput: true } as const
const decodeCallCase = Schema.decodeUnknownResult(CallCaseSchema, strict)
const decodeResultCase = Schema.decodeUnknownResult(ResultCaseSchema, strict)

/**
 * The first key given twice in one object of a valid JSON text, at any depth. JSON.parse keeps the last silently,
 * so `{"expect":"deny", …, "expect":"allow"}` would check what the reader of the first one does not expect.
 */
const duplicateKey = (text: string): string | undefined => {
  // One set of keys per open object (undefined for an array); a string right after `{` or `,` in an object is a key.
  const open: Array<Set<string> | undefined> = []
  let atKey = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    if (ch === '"') {
      let end = i + 1
      while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1
      const keys = open[open.length - 1]
      if (atKey && keys !== undefined) {
        const key = String(JSON.parse(text.slice(i, end + 1)))
        if (keys.has(key)) return key
        keys.add(key)
      }
      atKey = false
      i = end
    } else if (ch === "{") {
      open.push(new Set())
      atKey = true
    } else if (ch === "[") open.push(undefined)
    else if (ch === "}" || ch === "]") open.pop()
    else if (ch === ",") atKey = open[open.length - 1] !== undefined
  }
  return undefined
}

export const decodeCase = (text: string): Result.Result<TestCase, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    return Result.fail(`invalid JSON: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
  const twice = duplicateKey(text)
  if (twice !== undefined) {
    return Result.fail(
      `field ${JSON.stringify(twice)} given twice: JSON would keep only the last; give each field once`
    )
  }
  if (!isJsonObject(json)) return Result.fail('expected a JSON object with "call" or "tool_result"')
  const hasCall = json["call"] !== undefined
  const hasResult = json["tool_result"] !== undefined
  if (hasCall === hasResult) {
    return Result.fail(
      hasCall
        ? 'both "call" and "tool_result": a case is one or the other'
        : 'neither "call" nor "tool_result": a case is a tool call with "expect", or a tool result with the content or is_error expected'
    )
  }
  const known = hasCall ? CallCaseFields : ResultCaseFields
  const unknown = Object.keys(json).filter((key) => !known.includes(key))
  if (unknown.length > 0) {
    return Result.fail(
      `unknown field${unknown.length === 1 ? "" : "s"} ${unknown.map((k) => JSON.stringify(k)).join(", ")}; ` +
        `a ${hasCall ? "call" : "tool_result"} case has ${known.join(", ")}`
    )
  }
  if (hasCall) {
    const expect = json["expect"]
    if (expect === undefined)
      return Result.fail('missing "expect": the decision the call must get (allow, ask or deny)')
    if (typeof expect === "string" && !Decisions.includes(expect)) {
      return Result.fail(
        `"expect": ${JSON.stringify(expect)} is not a decision; expected one of ${Decisions.join(", ")}`
      )
    }
    const decoded = decodeCallCase(json)
    if (Result.isFailure(decoded)) return Result.fail(problemsOf(decoded.failure.issue))
    const c = decoded.success
    return Result.succeed({
      kind: "call",
      name: c.name,
      tool: c.call.tool,
      args: c.call.args,
      callId: c.call.call_id,
      expect: c.expect,
      by: byList(c.by),
      settled: c.args,
      failing: byList(c.failing)
    })
  }
  const decoded = decodeResultCase(json)
  if (Result.isFailure(decoded)) return Result.fail(problemsOf(decoded.failure.issue))
  const c = decoded.success
  if (c.content === undefined && c.is_error === undefined && c.by === undefined && c.failing === undefined) {
    return Result.fail(
      'a tool_result case expects nothing: give the "content", "is_error" or "by" that must come of it'
    )
  }
  return Result.succeed({
    kind: "tool_result",
    name: c.name,
    tool: c.tool_result.tool,
    args: c.tool_result.args,
    content: c.tool_result.content,
    isError: c.tool_result.is_error ?? false,
    callId: c.tool_result.call_id,
    expectContent: c.content,
    expectIsError: c.is_error,
    by: byList(c.by),
    failing: byList(c.failing)
  })
}
