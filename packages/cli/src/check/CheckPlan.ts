import type { EventName, JsonObject } from "@abhed/protocol"

/**
 * What `abhed-ext check` sends (pure data). Every event with a realistic sample payload, a request with unicode
 * and newlines inside its strings, an unknown event, and a burst of pipelined requests.
 */

export interface PlannedRequest {
  /** Shown in diagnostics: the event name, or `unicode`, `unknown event`, `burst #17`. */
  readonly label: string
  /** The event the reply is validated against; undefined for the unknown event (any JSON object will do). */
  readonly event: EventName | undefined
  readonly request: { readonly event: string; readonly [key: string]: unknown }
}

const session_id = "check-1"

const messages = [
  { role: "user", content: "Fix the failing test in src/cart.ts" },
  { role: "assistant", content: [{ type: "text", text: "Reading the test first." }] },
  { role: "tool", content: "1 failed, 12 passed" }
]

/** The tool call in the sample `tool_call`, `tool_call (round 2)` and `tool_result` (`check --call`). */
export interface SampleCall {
  readonly tool: string
  readonly args: JsonObject
}

/** What `check` sends without `--call`. An extension with `match` rules may never be sent it by a host. */
export const defaultCall: SampleCall = {
  tool: "bash",
  args: { command: "ls -la src", description: "list the sources" }
}

/** One request per event, in the order a host sends them (session_end last, after the two oddities). */
const perEvent = (call: SampleCall): ReadonlyArray<PlannedRequest> => [
  { label: "session_start", event: "session_start", request: { event: "session_start", session_id } },
  { label: "list_tools", event: "list_tools", request: { event: "list_tools", session_id } },
  {
    label: "before_agent_start",
    event: "before_agent_start",
    request: { event: "before_agent_start", session_id, system: "You are Abhed, a coding agent." }
  },
  { label: "context", event: "context", request: { event: "context", session_id, messages } },
  {
    label: "tool_call",
    event: "tool_call",
    request: { event: "tool_call", session_id, call_id: "c-1", tool: call.tool, args: call.args }
  },
  {
    label: "tool_call (round 2)",
    event: "tool_call",
    // By default the round-2 args differ (as after a rewrite); with --call they are the call's own.
    request: { event: "tool_call", session_id, call_id: "c-1", tool: call.tool, args: roundTwoArgs(call), round: 2 }
  },
  {
    label: "tool_result",
    event: "tool_result",
    request: {
      event: "tool_result",
      session_id,
      call_id: "c-1",
      tool: call.tool,
      args: roundTwoArgs(call),
      content: "total 8\n-rw-r--r-- 1 dev dev 120 cart.ts\n",
      is_error: false
    }
  },
  {
    label: "invoke_tool",
    event: "invoke_tool",
    request: { event: "invoke_tool", session_id, call_id: "c-2", tool: "check_sample_tool", args: { text: "hello" } }
  },
  { label: "before_compact", event: "before_compact", request: { event: "before_compact", session_id, messages } }
]

/** Unicode (accents, CJK, emoji, U+2028) and newlines, tabs, CRLF inside strings: the line must still be one line. */
export const unicodeRequest: PlannedRequest = {
  label: "unicode",
  event: "tool_result",
  request: {
    event: "tool_result",
    session_id,
    call_id: "c-3",
    tool: "read",
    args: { path: "docs/naïve café ✓.md" },
    content: 'héllo wörld — 日本語 🎉\nsecond line\r\n\ttabbed \u2028 after a line separator "quoted" \\ backslash\n',
    is_error: false
  }
}

export const unknownRequest: PlannedRequest = {
  label: "unknown event",
  event: undefined,
  request: { event: "check_unknown_event", session_id, detail: "an event this extension cannot know" }
}

export const sessionEnd: PlannedRequest = {
  label: "session_end",
  event: "session_end",
  request: { event: "session_end", session_id }
}

const roundTwoArgs = (call: SampleCall): JsonObject => (call === defaultCall ? { command: "ls -la src" } : call.args)

/** The first process: each request waits for its reply before the next is written. */
export const sequenceFor = (call: SampleCall): ReadonlyArray<PlannedRequest> => [
  ...perEvent(call),
  unicodeRequest,
  unknownRequest,
  sessionEnd
]

export const sequence: ReadonlyArray<PlannedRequest> = sequenceFor(defaultCall)

/** Requests written back-to-back without waiting (the second process, after its session_start). */
export const burst = (n: number): ReadonlyArray<PlannedRequest> =>
  Array.from({ length: n }, (_, i): PlannedRequest => {
    const label = `burst #${i + 1}`
    const call_id = `b-${i + 1}`
    switch (i % 3) {
      case 0:
        return {
          label,
          event: "tool_call",
          request: { event: "tool_call", session_id, call_id, tool: "read", args: { path: `src/module-${i}.ts` } }
        }
      case 1:
        return {
          label,
          event: "tool_result",
          request: {
            event: "tool_result",
            session_id,
            call_id,
            tool: "read",
            args: { path: `src/module-${i}.ts` },
            content: `export const n = ${i}\n`,
            is_error: false
          }
        }
      default:
        return { label, event: "context", request: { event: "context", session_id, messages } }
    }
  })

export const BurstSize = 100

/**
 * The `id` the check gives a request (docs/design.md#wire-protocol: a host gives every round its own), written with it
 * and looked for in the reply.
 */
export const requestId = (planned: PlannedRequest): string => `check-${planned.label.replace(/\s+/g, "-")}`
