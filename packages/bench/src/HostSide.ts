import { AuditLog, ExtensionHost, type ExtensionHostShape } from "@abhed/host"
import { type Config, Defaults, type ExtensionConfig, extensionConfig as makeExtensionConfig } from "@abhed/protocol"
import { Effect, Layer, Logger, ManagedRuntime, References } from "effect"
import { type ExtensionCommand, extensionsDir } from "./ExtensionFiles.ts"

/**
 * The host side: `ExtensionHost.layer` over real processes, built once into a ManagedRuntime, with the audit log
 * discarded (`AuditLog.layerNone`) and logs on stderr (stdout carries the table or the JSON document).
 */

export interface HostHandle {
  readonly host: ExtensionHostShape
  /** Run one effect on the host's runtime (the layer is built once, not per dispatch). */
  readonly run: <A>(effect: Effect.Effect<A>) => Promise<A>
  /** Close the host's scope: session_end, close stdin, wait for the processes to exit. */
  readonly dispose: () => Promise<void>
}

export const extensionConfig = (name: string, command: ExtensionCommand): ExtensionConfig =>
  makeExtensionConfig({
    name,
    command: command.command,
    args: command.args,
    ...(command.replyIds === undefined ? {} : { reply_ids: command.replyIds })
  })

/** `count` extensions running `command`, named ext-00, ext-01, ... */
export const configOf = (count: number, command: ExtensionCommand): Config => ({
  extensions: Array.from({ length: count }, (_, i) => extensionConfig(`ext-${String(i).padStart(2, "0")}`, command)),
  policy: Defaults.policy,
  max_rewrite_rounds: Defaults.max_rewrite_rounds,
  builtin_tools: Defaults.builtin_tools
})

const quiet = Layer.mergeAll(Layer.succeed(Logger.LogToStderr, true), Layer.succeed(References.MinimumLogLevel, "Warn"))

/**
 * Start the host: spawn every extension, session_start, list_tools. Resolves when the host is ready. `around`: a
 * layer the host and its dispatches run in (e.g. `Telemetry.layer`).
 */
export const startHost = async (
  config: Config,
  sessionId: string,
  around: Layer.Layer<never> = Layer.empty
): Promise<HostHandle> => {
  const layer = ExtensionHost.layer(config, { sessionId, baseDir: extensionsDir }).pipe(
    Layer.provide(AuditLog.layerNone),
    Layer.provideMerge(around),
    Layer.provideMerge(quiet)
  )
  const runtime = ManagedRuntime.make(layer)
  const host = await runtime.runPromise(Effect.service(ExtensionHost))
  return { host, run: (effect) => runtime.runPromise(effect), dispose: () => runtime.dispose() }
}
