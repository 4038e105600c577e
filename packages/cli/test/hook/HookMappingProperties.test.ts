import { decodeReply, Request } from "@abhed/protocol"
import { Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { HookFormat } from "../../src/hook/HookFormat.ts"
import { toolPart } from "../../src/hook/HookInput.ts"
import { mapRun } from "../../src/hook/HookOutcome.ts"
import type { HookRun } from "../../src/hook/HookRunner.ts"
import { toolNames } from "../../src/hook/HookToolNames.ts"

/**
 * Whatever a hook prints and however it exits, the adapter's reply is a valid reply for the event (the host's own
 * decoder accepts it, with no field of another event), it never blocks and rewrites at once, a hook that only
 * allows never blocks or asks, and a result rewrite settles: the same answer on the rewritten content proposes
 * nothing new.
 */

const text = fc.oneof(fc.string(), fc.constantFrom("no", "rm -rf is not allowed", ""))
const decision = fc.constantFrom("allow", "deny", "block", "approve", "ask", "defer", "maybe", 7, null)
const peerObject = fc.dictionary(
  fc.constantFrom("command", "file_path", "path", "x"),
  fc.oneof(fc.string(), fc.integer())
)
const answer = fc.record(
  {
    decision,
    reason: fc.oneof(text, fc.integer()),
    continue: fc.oneof(fc.boolean(), fc.constant("no")),
    stopReason: text,
    hookSpecificOutput: fc.oneof(
      fc.record(
        {
          hookEventName: fc.constantFrom("PreToolUse", "PostToolUse"),
          permissionDecision: decision,
          permissionDecisionReason: text,
          updatedInput: fc.oneof(peerObject, fc.string(), fc.constant(null)),
          tool_input: fc.oneof(peerObject, fc.integer()),
          tool_output: fc.oneof(text, fc.boolean()),
          additionalContext: text
        },
        { requiredKeys: [] }
      ),
      fc.string()
    )
  },
  { requiredKeys: [] }
)
const stdout = fc.oneof(
  answer.map((a) => JSON.stringify(a)),
  fc.string(),
  fc.constant(""),
  fc.jsonValue().map((v) => JSON.stringify(v))
)
const run: fc.Arbitrary<HookRun> = fc.oneof(
  fc.record({
    _tag: fc.constant("Exited" as const),
    code: fc.oneof(fc.constantFrom(0, 0, 0, 1, 2, 126, 127), fc.integer({ min: 0, max: 255 })),
    stdout,
    stderr: text
  }),
  fc.record({ _tag: fc.constant("TimedOut" as const), timeoutMs: fc.integer({ min: 1, max: 10_000 }), stderr: text }),
  fc.record({ _tag: fc.constant("Signaled" as const), signal: fc.constant("SIGSEGV"), stderr: text }),
  fc.record({ _tag: fc.constant("SpawnFailed" as const), detail: text })
)
const format = fc.constantFrom<HookFormat>("claude", "gemini")
const request = fc.oneof(
  fc.record({
    event: fc.constant("tool_call"),
    session_id: fc.constant("s"),
    call_id: fc.constant("c"),
    tool: fc.constantFrom("bash", "read", "weather"),
    args: peerObject
  }),
  fc.record({
    event: fc.constant("tool_result"),
    session_id: fc.constant("s"),
    call_id: fc.constant("c"),
    tool: fc.constantFrom("bash", "read"),
    args: peerObject,
    content: fc.string(),
    is_error: fc.boolean()
  })
)

/** A request as the SDK hands it to the adapter: checked against the protocol, typed. */
const typed = Schema.decodeUnknownSync(Request)

const mapped = (f: HookFormat, r: Record<string, unknown>, h: HookRun, failClosed: boolean) =>
  mapRun(String(r["event"]), toolPart(typed(r), toolNames(f)), h, { format: f, failClosed, label: "hook" }).reply

describe("the reply to any hook run", () => {
  it("is valid for its event, and never blocks and rewrites at once", () => {
    fc.assert(
      fc.property(format, request, run, fc.boolean(), (f, r, h, failClosed) => {
        const reply = mapped(f, r, h, failClosed)
        const event = r.event === "tool_call" ? "tool_call" : "tool_result"
        const decoded = decodeReply(event, reply)
        expect(Result.isSuccess(decoded)).toBe(true)
        if (Result.isSuccess(decoded)) expect(decoded.success.ignored).toEqual([])
        if (reply["block"] === true) expect(reply["args"]).toBeUndefined()
      }),
      { numRuns: 5000 }
    )
  })

  it("of a hook that only allows, approves or defers, neither blocks nor asks", () => {
    fc.assert(
      fc.property(format, request, fc.constantFrom("allow", "approve", "defer"), text, (f, r, d, why) => {
        const out = JSON.stringify({
          decision: d,
          reason: why,
          hookSpecificOutput: { permissionDecision: d, permissionDecisionReason: why }
        })
        const reply = mapped(f, r, { _tag: "Exited", code: 0, stdout: out, stderr: "" }, true)
        expect(reply["block"]).toBeUndefined()
        expect(reply["ask"]).toBeUndefined()
        expect(reply["is_error"]).toBeUndefined()
      }),
      { numRuns: 5000 }
    )
  })

  it("rewrites a result so that the same answer on the rewritten content settles", () => {
    fc.assert(
      fc.property(
        format,
        request.filter((r) => r.event === "tool_result"),
        run,
        fc.boolean(),
        (f, r, h, failClosed) => {
          const first = mapped(f, r, h, failClosed)
          if (typeof first["content"] !== "string") return
          const again = mapped(f, { ...r, content: first["content"] }, h, failClosed)
          expect(again["content"]).toBeUndefined()
        }
      ),
      { numRuns: 5000 }
    )
  })
})
