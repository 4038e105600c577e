import { afterEach, describe, expect, it } from "@effect/vitest"
import * as NodeNet from "node:net"
import * as PollBarrier from "../src/PollBarrier.ts"

/**
 * The barrier the process transport writes every request through (docs/design.md#attribution): a task runs only after
 * the event loop has polled for I/O since it was queued, so every byte already in a pipe when it was queued has
 * reached its read callback by then. Checked over a real loopback socket: bytes written to the peer land in the
 * reader's kernel buffer within the write call, and only a poll brings them to the `data` callback.
 */

interface Pair {
  /** What the reading end's `data` callback has received so far. */
  readonly received: () => string
  /** Write on the other end; returns once the bytes are in the reader's kernel buffer. */
  readonly write: (text: string) => void
  readonly reader: NodeNet.Socket
}

const open: Array<() => void> = []
afterEach(() => {
  for (const close of open.splice(0)) close()
})

/**
 * A connected loopback pair. Resolved only once both ends are ready: the server has the connection and the reader
 * has seen its own `connect` (after which Node starts reading), so no later poll is spent on the connection itself.
 */
const pair = async (): Promise<Pair> => {
  const server = NodeNet.createServer()
  const reader = new NodeNet.Socket()
  let text = ""
  reader.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8")
  })
  const accepted = new Promise<NodeNet.Socket>((resolve, reject) => {
    server.once("connection", resolve)
    server.once("error", reject)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  const connected = new Promise<void>((resolve, reject) => {
    reader.once("connect", () => resolve())
    reader.once("error", reject)
  })
  reader.connect(address.port, "127.0.0.1")
  const [writer] = await Promise.all([accepted, connected])
  writer.setNoDelay(true)
  open.push(() => {
    writer.destroy()
    reader.destroy()
    server.close()
  })
  return {
    received: () => text,
    write: (more) => {
      writer.write(more)
      // Written by the system call itself, not queued in Node: so the bytes are in the reader's buffer now.
      expect(writer.writableLength).toBe(0)
    },
    reader
  }
}

/** Blocks the thread: no event loop turn, as on a loaded machine or during a long synchronous step. */
const stall = (millis: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, millis)

const barriers = {
  "with libuv's loop count": PollBarrier.make(),
  "without it (two turns)": PollBarrier.make(undefined)
}

describe("PollBarrier (attribution, docs/design.md#failures)", () => {
  it("Node gives the loop count the barrier relies on", () => {
    // Otherwise the process barrier is the two-turn fallback: still correct, one turn slower.
    const made = PollBarrier.make()
    expect(made.usesLoopCount).toBe(true)
  })

  for (const [name, barrier] of Object.entries(barriers)) {
    describe(name, () => {
      it("bytes written while the loop was held up reach the read callback before a task queued after them", async () => {
        const p = await pair()
        p.write("stray\n")
        stall(20)
        expect(p.received()).toBe("") // nothing has polled yet: a synchronous write now would come first
        const seen = await new Promise<string>((resolve) => barrier.afterPoll(() => resolve(p.received())))
        expect(seen).toBe("stray\n")
      })

      it("queued from a read callback (after this turn's poll), a task still waits for the next poll", async () => {
        // The case one `setImmediate` gets wrong: from the poll phase it runs in this turn's check phase, before
        // any poll has seen bytes written after this turn's poll.
        const p = await pair()
        const seen = await new Promise<string>((resolve) => {
          p.reader.once("data", () => {
            p.write("second\n")
            barrier.afterPoll(() => resolve(p.received()))
          })
          p.write("first\n")
        })
        expect(seen).toBe("first\nsecond\n")
      })

      it("queued from an immediate (where Effect resumes fibers), a task waits for the next poll too", async () => {
        const p = await pair()
        const seen = await new Promise<string>((resolve) =>
          setImmediate(() => {
            p.write("stray\n")
            barrier.afterPoll(() => resolve(p.received()))
          })
        )
        expect(seen).toBe("stray\n")
      })

      it("runs every task queued, in the order queued", async () => {
        const order: Array<number> = []
        await new Promise<void>((resolve) => {
          for (const n of [1, 2, 3]) barrier.afterPoll(() => order.push(n))
          setImmediate(() => barrier.afterPoll(() => order.push(4)))
          barrier.afterPoll(() => setImmediate(() => barrier.afterPoll(resolve)))
        })
        expect(order).toEqual([1, 2, 3, 4])
      })
    })
  }
})
