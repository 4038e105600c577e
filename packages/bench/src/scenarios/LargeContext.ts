import { noop } from "../ExtensionFiles.ts"
import { interleave, timed } from "../Harness.ts"
import { rawDispatch } from "../RawHost.ts"
import { latencyRows } from "../Report.ts"
import type { Scenario } from "../Scenario.ts"
import { withSides } from "../Sides.ts"
import { summarize } from "../Stats.ts"
import { sessionId } from "./ToolCall.ts"

/**
 * A conversation of about `bytes` bytes of JSON: chat messages with text that needs escaping (quotes, newlines,
 * non-ASCII), as a real transcript does. Deterministic, so every run sends the same bytes.
 */
export const transcript = (bytes: number): ReadonlyArray<unknown> => {
  const paragraph = 'The "quick" brown fox — jumps over the lazy dog;\n\tthen `ls -la` prints: ok ✓. '
  const messages: Array<unknown> = []
  let size = 2 // the array brackets
  for (let i = 0; size < bytes; i++) {
    const content = `${i}: ${paragraph.repeat(48)}`
    const message = { role: i % 2 === 0 ? "user" : "assistant", content }
    size += Buffer.byteLength(JSON.stringify(message)) + 1
    messages.push(message)
  }
  return messages
}

/** 3. One 8 MiB `context` request to 4 no-op extensions (budget: p50 ratio ≤ 1.5). */
export const largeContext: Scenario = {
  title: "3. large context request",
  run: async (plan, progress) => {
    const mib = plan.contextBytes / 1024 / 1024
    progress(`${mib} MiB context to 4 extensions, ${plan.largeContext.iterations} dispatches per side`)
    const messages = transcript(plan.contextBytes)
    const samples = await withSides({ count: 4, command: noop }, [{ count: 4, command: noop }], (host, [raw = []]) =>
      interleave(
        {
          host: timed(() => host.run(host.host.context(messages))),
          raw: timed(() => rawDispatch(raw, { event: "context", session_id: sessionId, messages }))
        },
        plan.largeContext
      )
    )
    const h = summarize(samples.host)
    const r = summarize(samples.raw)
    const name = `3. ${mib} MiB context to 4 no-op ext`
    return [...latencyRows(name, h, r, 1.5)]
  }
}
