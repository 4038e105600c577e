import { Effect, Layer, type Scope } from "effect"
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
  Effect.gen(function*() {
    const h = yield* ExtensionHost
    return yield* body(h)
  }).pipe(Effect.provide(host(fakes, options)))
