import type { JsonObject } from "@abhed/protocol"
import type { HostHandle } from "../HostSide.ts"
import { rawDispatch, type RawExtension } from "../RawHost.ts"

/** The same tool call on both sides: a fixed args object, a fresh call_id per dispatch. */
export const toolArgs: JsonObject = { command: "git status --short", description: "Show the working tree status" }

export const sessionId = "bench"

/** One host dispatch, as the agent makes it. */
export const hostToolCall = (handle: HostHandle) => () => handle.run(handle.host.toolCall({ tool: "bash", args: toolArgs }))

/**
 * One raw dispatch: the request the host would write (with an `id`), encoded once, written to every extension. The
 * ids are made as the host makes them (`toFixed(0)`, not `String(n)`, which V8's number-to-string cache keeps alive:
 * packages/host/src/IdCounter.ts), so neither side's memory pays for a way of writing a number the other avoids.
 */
export const rawToolCall = (extensions: ReadonlyArray<RawExtension>) => {
  let n = 0
  return () => {
    n += 1
    const id = n.toFixed(0)
    return rawDispatch(extensions, { event: "tool_call", session_id: sessionId, call_id: `c-${id}`, tool: "bash", args: toolArgs, id })
  }
}
