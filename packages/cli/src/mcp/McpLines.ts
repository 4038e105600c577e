import { Effect, Stream } from "effect"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"

/**
 * A stdio MCP server's stdout cut into chunks that end at a newline. effect's stdio transport appends each chunk it
 * reads to a string and searches that whole string for a newline again, so a message of n bytes arriving in 64 KiB
 * pieces costs time in n²: 5 MiB took 13 s on a loaded 2-core machine, past any reasonable --timeout-ms. Handed whole
 * lines, it finds each at once, and a long message costs time in n. A run without a newline is passed on once it
 * passes `maxBytes`, so that the transport's own size limit still trips.
 */
export const alignLines = <E, R>(
  stdout: Stream.Stream<Uint8Array, E, R>,
  maxBytes: number
): Stream.Stream<Uint8Array, E, R> =>
  stdout.pipe(
    Stream.mapAccum(
      (): ReadonlyArray<Uint8Array> => [],
      (pending, chunk): readonly [ReadonlyArray<Uint8Array>, ReadonlyArray<Uint8Array>] => {
        const newline = chunk.lastIndexOf(10)
        if (newline === -1) {
          const held = [...pending, chunk]
          return held.reduce((n, c) => n + c.length, 0) > maxBytes ? [[], [Buffer.concat(held)]] : [held, []]
        }
        const line =
          pending.length === 0 && newline === chunk.length - 1
            ? chunk
            : Buffer.concat([...pending, chunk.subarray(0, newline + 1)])
        return [newline === chunk.length - 1 ? [] : [chunk.subarray(newline + 1)], [line]]
      },
      { onHalt: (pending) => (pending.length === 0 ? [] : [Buffer.concat(pending)]) }
    )
  )

/** The spawner in context, with every child's stdout cut at newlines (`alignLines`). */
export const lineAlignedSpawner = (maxBytes: number) =>
  Effect.gen(function* () {
    const base = yield* ChildProcessSpawner.ChildProcessSpawner
    return ChildProcessSpawner.make((command) =>
      Effect.map(base.spawn(command), (handle) =>
        ChildProcessSpawner.makeHandle({ ...handle, stdout: alignLines(handle.stdout, maxBytes) })
      )
    )
  })
