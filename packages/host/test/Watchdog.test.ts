import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Exit, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as Watchdog from "../src/Watchdog.ts"

describe("Watchdog", () => {
  it.effect("reports the request due once past its deadline, not before; a request armed later wakes it early", () =>
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      const clock = yield* Clock.clockWith(Effect.succeed)
      let due: { readonly deadline: number } | undefined
      const late: Array<number> = []
      const watchdog = yield* Watchdog.make({
        clock,
        due: () => due,
        late: (d) => {
          late.push(d.deadline)
          due = undefined
        },
        scope
      })
      yield* Effect.yieldNow
      due = { deadline: clock.currentTimeMillisUnsafe() + 1000 }
      watchdog.arm(due)
      yield* TestClock.adjust("999 millis")
      assert.deepStrictEqual(late, [])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(late, [1000])
    })
  )

  it.effect("terminates once: a second terminate waits for the first run instead of starting another", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      let runs = 0
      const terminator = yield* Watchdog.terminator(
        Effect.sync(() => void runs++),
        scope
      )
      terminator.request()
      yield* terminator.terminate
      yield* terminator.terminate
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(runs, 1)
    })
  )
})
