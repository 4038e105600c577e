import { assert, describe, it } from "@effect/vitest"
import { decide, fromToolCallReply } from "@abhed/core"
import { AuditLog, ExtensionHost } from "@abhed/host"
import type { ToolCallReply } from "@abhed/protocol"
import { Cause, Duration, Effect, Exit, References } from "effect"
import * as fc from "fast-check"
import { fixturesDir, within } from "../support/extension-helpers.ts"
import { faultConfig, hostConfig } from "../support/fault-cell.ts"
import { decisionRank, type OnFailure, type ReplyIds } from "../support/fault-model.ts"
import { fuzzLine } from "../support/fuzz-lines.ts"

/**
 * Fuzzing the replies (issue 25): a real extension answers a tool_call with a random line (random bytes, or a valid
 * reply mutated: truncated, duplicated, a value swapped for another type, huge or deep, NUL, lone surrogates, invalid
 * UTF-8). The host never crashes (no defect), answers in bounded time, and its decision is never looser than the
 * model's: the reply as the rules read it when it is a valid reply, else the extension's `on_failure`.
 * `ABHED_FULL=1` (`pnpm test:stress`) runs thousands; `ABHED_SEED` replays a seed.
 */

const full = process.env["ABHED_FULL"] === "1"
const runs = full ? 1500 : 40
const seed = process.env["ABHED_SEED"] !== undefined ? Number(process.env["ABHED_SEED"]) : Date.now() % 1_000_000

const valid = [
  `{"id":"@ID@","block":true,"reason":"no"}`,
  `{"id":"@ID@","ask":true}`,
  `{"id":"@ID@","ask":true,"reason":"why","block":null}`,
  `{"id":"@ID@","args":{"command":"ls -la"}}`,
  `{"block":true}`,
  `{"id":"@ID@"}`
]

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

const depth = (v: unknown): number =>
  Array.isArray(v)
    ? 1 + Math.max(0, ...v.map(depth))
    : v !== null && typeof v === "object"
      ? 1 + Math.max(0, ...Object.values(v).map(depth))
      : 0

const finite = (v: unknown): boolean =>
  typeof v === "number"
    ? Number.isFinite(v)
    : Array.isArray(v)
      ? v.every(finite)
      : v !== null && typeof v === "object"
        ? Object.values(v).every(finite)
        : true

/**
 * The rules' reading of a reply line to a `tool_call` (docs/protocol.md "What makes a reply malformed", "Echo id"):
 * the reply, or dead; "unsure" where the rules say nothing precise (an id that is not a string).
 */
const judge = (
  bytes: Uint8Array,
  replyIds: ReplyIds
): { readonly _tag: "reply"; readonly reply: ToolCallReply } | { readonly _tag: "dead" | "unsure" } => {
  let value: unknown
  try {
    value = JSON.parse(strictUtf8.decode(bytes).replaceAll("@ID@", "ID"))
  } catch {
    return { _tag: "dead" }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { _tag: "dead" }
  if (depth(value) > 256) return { _tag: "dead" }
  const o = value as Record<string, unknown>
  for (const [key, v] of Object.entries(o)) if (key !== "keep" && key !== "tools" && !finite(v)) return { _tag: "dead" }
  if (Object.hasOwn(o, "id") && o["id"] !== "ID")
    return typeof o["id"] === "string" ? { _tag: "dead" } : { _tag: "unsure" }
  if (replyIds === "required" && !Object.hasOwn(o, "id")) return { _tag: "dead" }
  const isType = (key: string, ok: (v: unknown) => boolean) => !Object.hasOwn(o, key) || o[key] === null || ok(o[key])
  const typed =
    isType("block", (v) => typeof v === "boolean") &&
    isType("ask", (v) => typeof v === "boolean") &&
    isType("reason", (v) => typeof v === "string") &&
    isType("args", (v) => v !== null && typeof v === "object" && !Array.isArray(v))
  if (!typed) return { _tag: "dead" }
  const reply: ToolCallReply = {
    ...(o["block"] === true ? { block: true } : {}),
    ...(o["ask"] === true ? { ask: true } : {}),
    ...(typeof o["reason"] === "string" ? { reason: o["reason"] } : {})
  }
  return { _tag: "reply", reply }
}

const caseArb = fc.record({
  line: fuzzLine(valid),
  on_failure: fc.constantFrom<OnFailure>("ignore", "ask", "deny"),
  reply_ids: fc.constantFrom<ReplyIds>("optional", "required")
})
type Case = typeof caseArb extends fc.Arbitrary<infer A> ? A : never

const runCase = (c: Case) =>
  Effect.gen(function* () {
    const config = hostConfig([
      faultConfig(
        { name: "f", fault: "raw", at: "tool_call", raw: c.line, replies: { tool_call: {} } },
        {
          on_failure: c.on_failure,
          reply_ids: c.reply_ids
        }
      )
    ])
    const started = Date.now()
    const exit = yield* Effect.exit(
      ExtensionHost.use((h) => h.toolCall({ tool: "bash", args: { command: "ls" } })).pipe(
        Effect.provide(ExtensionHost.layer(config, { sessionId: "s-fuzz", baseDir: fixturesDir })),
        Effect.provide(AuditLog.layerMemory),
        Effect.provideService(References.MinimumLogLevel, "None"),
        // A hung host fails its line, not the suite.
        Effect.timeout(Duration.millis(2 * within(1500)))
      )
    )
    const millis = Date.now() - started
    const problems: Array<string> = []
    if (Exit.isFailure(exit)) {
      problems.push(`the host failed: ${Cause.pretty(exit.cause).slice(0, 300)}`)
      return problems
    }
    const judged = judge(c.line, c.reply_ids)
    if (judged._tag !== "unsure") {
      const level =
        judged._tag === "reply"
          ? decide({ level: "allow", source: "default", reason: undefined }, fromToolCallReply("f", judged.reply))
              .decision
          : c.on_failure === "ignore"
            ? "allow"
            : c.on_failure
      if (decisionRank(exit.value.decision) < decisionRank(level)) {
        problems.push(`looser than the model: host ${exit.value.decision}, model ${level} (${judged._tag})`)
      }
    }
    if (millis > within(1500)) problems.push(`took ${millis} ms`)
    return problems
  })

describe("fuzzing the replies", () => {
  it(
    `random and mutated reply lines to a tool_call (${runs} lines, seed ${seed})`,
    async () => {
      const cases = fc.sample(caseArb, { numRuns: runs, seed })
      const results = await Effect.runPromise(
        Effect.forEach(cases, (c, i) => Effect.map(runCase(c), (problems) => ({ i, c, problems })), { concurrency: 8 })
      )
      const failed = results.filter((r) => r.problems.length > 0)
      if (failed.length > 0) {
        assert.fail(
          `${failed.length} of ${runs} lines broke a rule (seed ${seed}):\n` +
            failed
              .slice(0, 5)
              .map(
                (f) =>
                  `#${f.i} ${f.c.on_failure}/${f.c.reply_ids} ${JSON.stringify(Buffer.from(f.c.line).toString("latin1").slice(0, 200))}: ${f.problems.join("; ")}`
              )
              .join("\n")
        )
      }
    },
    full ? 3_600_000 : 120_000
  )
})
