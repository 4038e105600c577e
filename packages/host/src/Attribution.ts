import type { ReadLine } from "@abhed/protocol"
import { Exit } from "effect"
import type { ExtensionError } from "./ExtensionError.ts"
import { type DeathError, type Due, outOfStep } from "./Transport.ts"

/**
 * Which line belongs to which request (docs/design.md#failures): a line belongs to the request in flight when its
 * bytes were read. The transport calls `read` synchronously from its read callback with the complete lines of that
 * read, and a request becomes the one in flight in the same synchronous step that writes its bytes (`start`); so no
 * line read before a request was written can be taken as its reply, whatever the scheduler does next. The slot is a
 * plain variable for that reason: every change to it is one synchronous step, which is also what the hot path wants
 * (no Ref, no fiber per exchange).
 */

/** The request whose reply is due, with how it ends. */
export interface InFlight extends Due {
  /** Called once, synchronously, with the reply line or what ended the exchange without one. */
  readonly settle: (reply: Exit.Exit<unknown, ExtensionError>) => void
  readonly timeoutMs: number
  /** When the reply is due, on the Clock (the timeout counts from the write). */
  readonly deadline: number
}

export interface Attribution {
  /** The request in flight, if any. */
  readonly due: () => InFlight | undefined
  /**
   * Makes `request` the one in flight and runs `write` (its bytes out, the watchdog armed) in the same synchronous
   * step. A throw of `write` is not the extension's failure: the request ends with the defect (run from the event
   * loop, it must not throw).
   */
  readonly start: (request: InFlight, write: () => void) => void
  /** Ends the request in flight without a reply, and returns it for its caller to fail. */
  readonly take: () => InFlight | undefined
  /** One read's lines, attributed to the request in flight now, in one synchronous step. */
  readonly read: (lines: ReadonlyArray<ReadLine>) => void
}

export const make = (options: {
  readonly extension: string
  readonly idsRequired: boolean
  /** The extension is dead: nothing read counts any more. */
  readonly dead: () => boolean
  /** The lines are out of step: the extension dies (failing the request in flight). */
  readonly die: (error: DeathError) => void
}): Attribution => {
  const { extension, idsRequired, dead, die } = options
  let inFlight: InFlight | undefined
  return {
    due: () => inFlight,
    start: (request, write) => {
      try {
        inFlight = request
        write()
      } catch (defect) {
        if (inFlight === request) inFlight = undefined
        request.settle(Exit.die(defect))
      }
    },
    take: () => {
      const current = inFlight
      inFlight = undefined
      return current
    },
    read: (lines) => {
      if (lines.length === 0 || dead()) return
      const current = inFlight
      const death = outOfStep(extension, lines, current, idsRequired)
      if (death !== undefined) return die(death)
      const line = lines[0]
      if (current === undefined || line?._tag !== "Json") return // `outOfStep` let it through: never
      inFlight = undefined
      current.settle(Exit.succeed(line.value))
    }
  }
}
