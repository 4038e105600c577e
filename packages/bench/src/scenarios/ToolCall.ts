import * as IdCounter from "@abhed/host/IdCounter"
import type { JsonObject } from "@abhed/protocol"
import type { HostHandle } from "../HostSide.ts"
import { rawDispatch, type RawExtension } from "../RawHost.ts"

/** The same tool call on both sides: a fixed args object, a fresh call_id per dispatch. */
export const toolArgs: JsonObject = { command: "git status --short", description: "Show the working tree status" }

export const sessionId = "bench"

/** One host dispatch, as the agent makes it. */
export const hostToolCall = (handle: HostHandle) => () =>
  handle.run(handle.host.toolCall({ tool: "bash", args: toolArgs }))

/**
 * One raw dispatch: the request the host would write (with an `id`), encoded once, written to every extension. The
 * ids are made by the host's own `IdCounter` (not through V8's number-to-string cache), so neither side's memory pays
 * for a way of writing a number the other avoids. Imported by its own path: the raw client's process (scenario 5
 * measures its memory) must not load the host and effect.
 */
export const rawToolCall = (extensions: ReadonlyArray<RawExtension>) => {
  const nextId = IdCounter.make()
  return () => {
    const id = nextId()
    return rawDispatch(extensions, {
      event: "tool_call",
      session_id: sessionId,
      call_id: `c-${id}`,
      tool: "bash",
      args: toolArgs,
      id
    })
  }
}
