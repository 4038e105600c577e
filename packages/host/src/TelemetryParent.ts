import { Effect, type Fiber, Tracer } from "effect"

/**
 * A dispatch's span where the fiber's context does not carry it. With no policy hook, nothing under a dispatch but
 * the host's own code reads the parent span, and providing it (a copy of the fiber's whole context and a rebuild of
 * its cache, ~2.5 µs of p50: docs/benchmarks.md) is skipped: the span waits in its fiber's slot here, for the
 * exchanges' child spans, and is provided as the parent span only where something else may read it.
 */
export const bareSpans = new WeakMap<Fiber.Fiber<unknown, unknown>, Tracer.Span>()

/**
 * `effect` with the dispatch's span as its parent span, when the fiber runs a dispatch whose context does not carry
 * it: for what may read the fiber's span under a bare dispatch (an extension's death warning: a logger may link it
 * to the span; exchanges forked into fibers of their own). Otherwise `effect` as it is.
 */
export const underDispatchSpan = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const span = bareSpans.get(fiber)
    return span === undefined ? effect : Effect.provideService(effect, Tracer.ParentSpan, span)
  })
