import { type EventName, Framing, type RequestOf, type WithId } from "@abhed/protocol"
import { Effect, Layer, type Scope } from "effect"
import type { EncodedRequest } from "../src/Extension.ts"
import { AuditLog, type Extension, ExtensionHost, type HostOptions } from "../src/index.ts"

/** Test helpers: a host over in-process fakes with an in-memory audit log, and a body run against it. */

export type Fake = Effect.Effect<Extension, never, Scope.Scope>

export const host = (fakes: ReadonlyArray<Fake>, options?: Partial<HostOptions>) =>
  ExtensionHost.layerFake(fakes, { sessionId: "s-1", ...options }).pipe(Layer.provideMerge(AuditLog.layerMemory))

export const withHost = <A, E>(
  fakes: ReadonlyArray<Fake>,
  body: (h: ExtensionHost["Service"]) => Effect.Effect<A, E, AuditLog>,
  options?: Partial<HostOptions>
) =>
  Effect.gen(function* () {
    const h = yield* ExtensionHost
    return yield* body(h)
  }).pipe(Effect.provide(host(fakes, options)))

/** A request as the host sends it to one extension: the value, and its bytes encoded once. */
export const encodeRequest = <E extends EventName>(
  value: WithId<RequestOf<E>> & { readonly event: E }
): EncodedRequest<E> => ({
  event: value.event,
  value,
  bytes: Framing.encodeLine(value)
})

/** A `tool_call` request whose round id and call id are both `id`. */
export const toolCallRequest = (id: string) =>
  encodeRequest<"tool_call">({
    event: "tool_call",
    session_id: "s",
    id,
    call_id: id,
    tool: "bash",
    args: { command: "ls" }
  })
