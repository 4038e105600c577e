import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import * as Permit from "../src/Permit.ts"

describe("Permit", () => {
  it.effect("waiters are served in arrival order; a release with nobody waiting frees it", () =>
    Effect.gen(function* () {
      const permit = Permit.make()
      assert.isTrue(permit.tryTake())
      assert.isFalse(permit.tryTake())
      const order: Array<string> = []
      const wait = (name: string) =>
        Effect.forkChild(
          Effect.andThen(
            permit.take,
            Effect.sync(() => order.push(name))
          ),
          { startImmediately: true }
        )
      const a = yield* wait("a")
      const b = yield* wait("b")
      permit.release()
      yield* Fiber.join(a)
      assert.deepStrictEqual(order, ["a"])
      assert.isTrue(permit.busy())
      permit.release()
      yield* Fiber.join(b)
      assert.deepStrictEqual(order, ["a", "b"])
      permit.release()
      assert.isFalse(permit.busy())
    })
  )

  it.effect("a waiter interrupted in line leaves it; the permit goes to the next", () =>
    Effect.gen(function* () {
      const permit = Permit.make()
      permit.tryTake()
      const a = yield* Effect.forkChild(permit.take, { startImmediately: true })
      const b = yield* Effect.forkChild(permit.take, { startImmediately: true })
      yield* Fiber.interrupt(a)
      permit.release()
      yield* Fiber.join(b)
      assert.isTrue(permit.busy())
    })
  )

  it("beginHeld: only when free; the permit is held until the end, even when the caller abandoned it", () => {
    const permit = Permit.make()
    let orphans = 0
    let end: ((exit: Exit.Exit<number, string>) => void) | undefined
    const held = Permit.beginHeld<number, string>(permit, {
      begin: (e) => {
        end = e
      },
      orphans: (delta) => {
        orphans += delta
      }
    })
    assert.isDefined(held)
    assert.isUndefined(Permit.beginHeld(permit, { begin: () => undefined, orphans: () => undefined }))
    held?.abandon()
    assert.strictEqual(orphans, 1)
    assert.isTrue(permit.busy())
    end?.(Exit.succeed(1))
    assert.strictEqual(orphans, 0)
    assert.isFalse(permit.busy())
  })

  it("beginHeld: a throw in begin ends it with a defect, and the listener hears it", () => {
    const permit = Permit.make()
    const held = Permit.beginHeld<number, string>(permit, {
      begin: () => {
        throw new Error("boom")
      },
      orphans: () => undefined
    })
    let heard: Exit.Exit<number, string> | undefined
    held?.onDone((exit) => {
      heard = exit
    })
    assert.isTrue(heard !== undefined && Exit.hasDies(heard))
    assert.isFalse(permit.busy())
  })
})
