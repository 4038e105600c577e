import { describe, expect, it } from "@effect/vitest"
import { type EventName, ReplyFields } from "@abhed/protocol"
import { Effect, Logger } from "effect"
import * as fc from "fast-check"
import * as FakeExtension from "../src/FakeExtension.ts"
import { AuditLog } from "../src/index.ts"
import { withHost } from "./FakeHost.ts"

/**
 * A reply in the wrong shape may hold what its extension was there to hide (a redactor's content as an array of
 * lines). Whatever the field and the value, its death cause never quotes it: not in the outcome the agent and the
 * model read (reasons, withheld notes), not in the audit record, not in the host's log.
 */

const Secret = "wJalrXUtnFEMI"

// Never a bare string: in a string field it would be a good reply, and its content legitimately passed on.
const holding = fc
  .letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.tuple(fc.string(), fc.string()).map(([a, b]) => `${a}${Secret}${b}`),
      fc.array(tie("value"), { minLength: 1, maxLength: 3 }),
      fc.dictionary(fc.constantFrom("a", "text", "name"), tie("value"), { minKeys: 1, maxKeys: 3 })
    )
  }))
  .value.filter((v) => typeof v !== "string")

const events = ["tool_call", "tool_result", "context", "before_agent_start", "before_compact"] as const
const fields = events.flatMap((event) => Object.keys(ReplyFields[event]).map((field) => [event, field] as const))

describe("a malformed reply's value never leaves the host", () => {
  it("property: for every reply field, no cause, audit record, log line or outcome holds a string of the bad value", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fields), holding, async ([event, field], value) => {
        const logged: Array<string> = []
        const capture = Logger.make((options) => void logged.push(JSON.stringify(options.message)))
        const bad = FakeExtension.fromReplies(
          "redactor",
          { [event]: () => ({ [field]: value }) },
          { on_failure: "deny" }
        )
        const result = await Effect.runPromise(
          withHost([bad], (h) =>
            Effect.gen(function* () {
              const e: EventName = event
              const outcome: unknown =
                e === "tool_call"
                  ? yield* h.toolCall({ tool: "read", args: { path: "creds" } })
                  : e === "tool_result"
                    ? yield* h.toolResult({ tool: "read", args: { path: "creds" }, content: "ok", is_error: false })
                    : e === "context"
                      ? yield* h.context([{ role: "user", content: "hi" }])
                      : e === "before_agent_start"
                        ? yield* h.beforeAgentStart("be careful")
                        : yield* h.beforeCompact([{ role: "user", content: "hi" }])
              const status = yield* h.status
              const audit = yield* AuditLog.use((a) => a.entries)
              return { outcome, dead: status[0]?.state._tag === "dead", audit }
            })
          ).pipe(Effect.provide(Logger.layer([capture])))
        )
        // A value the field takes (an object for `args`) is a good reply: nothing to check.
        fc.pre(result.dead)
        const seen = JSON.stringify([result.outcome, result.audit, logged])
        expect(seen).toContain("malformed_reply")
        expect(seen).not.toContain(Secret)
      }),
      { numRuns: 150 }
    )
  }, 120_000)
})
