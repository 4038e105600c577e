import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as HangupSignal from "../src/HangupSignal.ts"

describe("HangupSignal", () => {
  it.effect("one listener per signal however many hold it, removed with the last holder", () =>
    Effect.gen(function* () {
      const before = { hup: process.listenerCount("SIGHUP"), quit: process.listenerCount("SIGQUIT") }
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      yield* HangupSignal.hold.pipe(Scope.provide(first))
      yield* HangupSignal.hold.pipe(Scope.provide(second))
      assert.strictEqual(process.listenerCount("SIGHUP"), before.hup + 1)
      assert.strictEqual(process.listenerCount("SIGQUIT"), before.quit + 1)
      yield* Scope.close(first, Exit.void)
      assert.strictEqual(process.listenerCount("SIGHUP"), before.hup + 1) // the second still holds it
      yield* Scope.close(second, Exit.void)
      assert.deepStrictEqual({ hup: process.listenerCount("SIGHUP"), quit: process.listenerCount("SIGQUIT") }, before)
    })
  )
})
