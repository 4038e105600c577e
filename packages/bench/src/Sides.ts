import type { ExtensionCommand } from "./ExtensionFiles.ts"
import { configOf, type HostHandle, startHost } from "./HostSide.ts"
import { closeAll, type RawExtension, type RawSession, rawStartup } from "./RawHost.ts"
import { sessionId } from "./scenarios/ToolCall.ts"

/** `count` extensions running `command`. */
export interface Group {
  readonly count: number
  readonly command: ExtensionCommand
  /** Raw groups only: where the raw client runs the processes (default: a session of their own, as the host). */
  readonly session?: RawSession
}

/**
 * Start a host over `host` and one raw client per entry of `raw`, run `body`, and always close everything that
 * was started (also when a later start fails), so no scenario leaves processes behind.
 */
export const withSides = async <A>(
  host: Group,
  raw: ReadonlyArray<Group>,
  body: (host: HostHandle, raw: ReadonlyArray<ReadonlyArray<RawExtension>>) => Promise<A>
): Promise<A> => {
  const handle = await startHost(configOf(host.count, host.command), sessionId)
  const clients: Array<ReadonlyArray<RawExtension>> = []
  try {
    for (const group of raw)
      clients.push(await rawStartup(group.count, group.command.command, group.command.args, sessionId, group.session))
    return await body(handle, clients)
  } finally {
    await handle.dispose()
    await closeAll(clients.flat())
  }
}
