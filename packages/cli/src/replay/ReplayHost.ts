import { AuditLog, type AuditRecord } from "@abhed/host/AuditLog"
import { ExtensionHost, type ExtensionHostShape } from "@abhed/host/ExtensionHost"
import { Context, Effect, Layer, Ref, type Scope } from "effect"
import type { LoadedConfig } from "../ConfigFile.ts"
import { processHost } from "../HostLayer.ts"

/**
 * A config's real extensions behind the host, as `run` starts them, for a command that dispatches events itself
 * (`test`, `replay`) and must see what the host made of each: the audit record of the last dispatch is kept (in
 * memory, content verbatim: nothing is written anywhere), so the command can tell who denied, rewrote or withheld.
 */
export interface RecordingHost {
  readonly host: ExtensionHostShape
  /** The record of the last dispatch (`session_start`'s until the first event). */
  readonly last: Effect.Effect<AuditRecord | undefined>
}

/** Starts the host in the given scope (`session_start`, `list_tools`); closing the scope sends `session_end`. */
export const startHost = (loaded: LoadedConfig, sessionId: string): Effect.Effect<RecordingHost, never, Scope.Scope> =>
  Effect.gen(function* () {
    const ref = yield* Ref.make<AuditRecord | undefined>(undefined)
    const sink = Layer.succeed(AuditLog, AuditLog.of({ record: (r) => Ref.set(ref, r), entries: Effect.succeed([]) }))
    const context = yield* Layer.build(Layer.provide(processHost(loaded)(sessionId), sink))
    return { host: Context.get(context, ExtensionHost), last: Ref.get(ref) }
  })
