import { type EventName, type ExtensionConfig, extensionConfig, type Request, type RequestOf } from "@abhed/protocol"
import { Effect, FiberSet, Schema, type Scope } from "effect"
import type { Extension } from "./Extension.ts"
import * as ExtensionCore from "./ExtensionCore.ts"
import { ExtensionExited } from "./ExtensionError.ts"

/**
 * In-process extensions for tests (docs/design.md#architecture). A fake's handler plays the extension's side of one
 * exchange and returns the RAW reply JSON, so a fake can be slow (`Effect.never` → timeout on the Clock), wrong
 * (malformed replies) or die (`FakeExit` → `ExtensionExited`). It runs on the same core as the process-backed
 * extension, so serialization, timeouts, death and status behave exactly alike.
 */

/** The fake's process "exited" while handling the request. */
export class FakeExit extends Schema.TaggedError<FakeExit>()("FakeExit", {
  code: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String)
}) {
  static code(code: number): FakeExit {
    return new FakeExit({ code, signal: null })
  }
  static signal(signal: string): FakeExit {
    return new FakeExit({ code: null, signal })
  }
}

export type Handler = (request: Request) => Effect.Effect<unknown, FakeExit>

export interface FakeOptions {
  readonly sessionId?: string
}

/** The config a fake gets: all events, the protocol's default timeouts, `on_failure: "ignore"`. */
export const config = (name: string, overrides?: Partial<ExtensionConfig>): ExtensionConfig =>
  extensionConfig({ command: `fake:${name}`, ...overrides, name })

export const make = (
  name: string,
  handler: Handler,
  overrides?: Partial<ExtensionConfig>,
  options?: FakeOptions
): Effect.Effect<Extension, never, Scope.Scope> =>
  ExtensionCore.make({
    config: config(name, overrides),
    sessionId: options?.sessionId ?? "fake-session",
    connect: (events) =>
      Effect.gen(function* () {
        // The handlers running now; terminating the fake interrupts them, as killing a process would. Each is
        // started from `write` itself (synchronously, as a process's stdin is written), in the fake's context.
        const running = yield* FiberSet.make<void, never>()
        const run = yield* FiberSet.runtime(running)<never>()
        const stop = FiberSet.clear(running)
        const transport: ExtensionCore.Transport = {
          write: (request) => {
            run(
              handler(request.value).pipe(
                Effect.matchEffect({
                  onSuccess: (json) => Effect.sync(() => events.read([{ _tag: "Json", value: json }])),
                  onFailure: (exit) =>
                    Effect.sync(() =>
                      events.fail(new ExtensionExited({ extension: name, code: exit.code, signal: exit.signal }))
                    )
                })
              )
            )
          },
          catchUp: (then) => then(), // a fake's reply is delivered when its handler finishes: nothing is pending
          terminate: stop,
          close: stop,
          pid: undefined,
          stderrTail: Effect.succeed("")
        }
        return transport
      })
  })

/** Raw replies per event; events without an entry get `{}` (no opinion). */
export type Replies = {
  readonly [E in EventName]?: (request: RequestOf<E>) => unknown
}

/** A fake from plain functions: `fromReplies("guard", { tool_call: (req) => ({ block: true }) })`. */
export const fromReplies = (
  name: string,
  replies: Replies,
  overrides?: Partial<ExtensionConfig>,
  options?: FakeOptions
): Effect.Effect<Extension, never, Scope.Scope> =>
  make(
    name,
    (request) => {
      // `replies[request.event]` takes `RequestOf<typeof request.event>`, which `request` is; TypeScript cannot
      // correlate the two through the union, hence the widening.
      const reply = replies[request.event] as ((request: Request) => unknown) | undefined
      return Effect.sync(() => (reply === undefined ? {} : reply(request)))
    },
    overrides,
    options
  )
