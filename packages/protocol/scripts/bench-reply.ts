/**
 * Micro-benchmark of reply decoding, on the host's hot path (every reply of every dispatch): the hand checks of
 * `decodeReply` against a decode with the reply Schemas. Run: `node packages/protocol/scripts/bench-reply.ts [n]`.
 * Not a test: the numbers depend on the machine; the comment on `ReplyFields` (Reply.ts) records a run.
 */
import * as Schema from "effect/Schema"
import { performance } from "node:perf_hooks"
import { decodeReply, type EventName, ReplySchemas } from "../src/index.ts"

const n = Number(process.argv[2] ?? 1_000_000)
const replies: ReadonlyArray<readonly [EventName, unknown]> = [
  ["tool_call", {}],
  ["tool_call", { block: true, reason: "x", id: "1" }],
  ["tool_result", { content: "redacted text", id: "2" }]
]
const decoders = Object.fromEntries(
  Object.entries(ReplySchemas).map(([event, schema]) => [event, Schema.decodeUnknownResult(schema)])
)
const bySchema = (event: EventName, input: unknown) => {
  const decode = decoders[event]
  if (decode === undefined) throw new Error(event)
  return decode(input)
}

// The machine is shared: the two decoders take turns, and each keeps its best of `rounds` runs.
const rounds = Number(process.argv[3] ?? 5)
const best = new Map<string, number>()
const time = (label: string, run: (event: EventName, input: unknown) => unknown) => {
  for (const [event, input] of replies) {
    for (let i = 0; i < 50_000; i++) run(event, input) // warm up
    const start = performance.now()
    for (let i = 0; i < n; i++) run(event, input)
    const ns = ((performance.now() - start) * 1e6) / n
    const key = `${label.padEnd(7)} ${JSON.stringify(input).padEnd(42)}`
    best.set(key, Math.min(best.get(key) ?? Infinity, ns))
  }
}
for (let r = 0; r < rounds; r++) {
  time("hand", decodeReply)
  time("schema", bySchema)
}
for (const [key, ns] of best) console.log(`${key} ${ns.toFixed(0).padStart(5)} ns/reply (best of ${rounds} x ${n})`)
