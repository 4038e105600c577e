import { Extension } from "@abhed/extension"
import { EffectExtension } from "@abhed/extension/effect"
import { Effect, References } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { exchange, fixtures, toolCall } from "./ExtensionProcess.ts"
import { hostile, hostileNames, trapProxy } from "./fixtures/Hostile.ts"

/**
 * The SDK never throws, whatever a handler throws or returns: a value `String()` or `JSON.stringify` cannot
 * convert is answered `{}` and logged, and the extension stays alive to judge the next call. Were it to crash,
 * its guard would be gone and the next `rm -rf /` allowed.
 */

const hostileExtension = `${fixtures}hostile-extension.ts`

/** How a handler hands the value over. The first four are failures: the reply is always exactly `{}`. */
const failures = ["throw", "reject", "fail", "die"] as const
const returns = ["return", "resolve", "succeed"] as const

/** What the SDK answers when the handler's code failed (threw, rejected, failed) or returned what is not a reply. */
const handlerFailed = { failed: "the tool_call handler failed (its error is on the extension's stderr)" }
const notAReply = {
  failed: "the tool_call handler returned what is not a reply (its error is on the extension's stderr)"
}

describe("SDK extensions answer failed for hostile thrown and returned values (real child processes)", () => {
  for (const entry of ["plain", "effect"] as const) {
    it(`${entry === "plain" ? "Extension.main" : "EffectExtension.run"}: every hostile value gets failed, the extension lives on and still blocks`, async () => {
      const cases = [...failures, ...returns].flatMap((how) => hostileNames.map((name) => `${how}:${name}`))
      const requests = [
        ...cases.map((tool, i) => ({ ...toolCall(tool, {}, `c-${i}`), id: i })),
        { ...toolCall("rm", { path: "/" }, "c-last"), id: "last" }
      ]
      const done = await exchange("node", [hostileExtension, entry], requests)
      expect(done.code).toBe(0)
      expect(done.replies).toHaveLength(cases.length + 1)
      cases.forEach((tool, i) => {
        const reply = done.replies[i]
        // A handler that failed: `failed`. A hostile value returned: `failed` (a value that is no reply, or one whose
        // traps throw when the SDK asks whether it is a promise), unless it reads as an empty reply (an object whose
        // odd keys are none of the event's fields): no opinion, as any empty reply.
        if ((failures as ReadonlyArray<string>).includes(tool.split(":")[0] ?? ""))
          expect(reply, tool).toEqual({ ...handlerFailed, id: i })
        else expect([{ id: i }, { ...notAReply, id: i }, { ...handlerFailed, id: i }], tool).toContainEqual(reply)
      })
      expect(done.replies.at(-1)).toEqual({ block: true, reason: "no", id: "last" })
      // The causes that can be shown are, the others are named as such: nothing crashed while describing them.
      expect(done.stderr).toContain("cannot be shown")
      expect(done.stderr).toContain("hostile: conversion threw")
      expect(done.stderr).not.toMatch(/Unhandled|uncaught/i)
    })
  }
})

describe("a promise a handler did not wait for rejects later (real child process)", () => {
  it("Extension.main logs it and lives on: the next call is still judged", async () => {
    const done = await exchange(
      "node",
      [`${fixtures}floating-extension.ts`],
      [
        { ...toolCall("ls", {}, "c-1"), id: 1 },
        { ...toolCall("rm", { path: "/" }, "c-2"), id: 2 }
      ]
    )
    expect(done.replies).toEqual([{ id: 1 }, { block: true, reason: "no", id: 2 }])
    expect(done.code).toBe(0)
    expect(done.stderr).toContain(
      "a promise nobody awaited rejected (the extension goes on): Error: metrics endpoint unreachable"
    )
  })
})

// A hostile value built from parts, made fresh for each call (getters may count their reads).
type Recipe = () => unknown

const thrower = (value: Recipe) => (): never => {
  throw value()
}

const recipe: fc.Arbitrary<Recipe> = fc.letrec<{ value: Recipe }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(...hostileNames).map(
      (name): Recipe =>
        () =>
          hostile(name)
    ),
    fc.anything().map(
      (value): Recipe =>
        () =>
          value
    ),
    tie("value").map(
      (inner): Recipe =>
        () => ({ toString: thrower(inner) })
    ),
    tie("value").map(
      (inner): Recipe =>
        () =>
          Object.defineProperty({}, "block", { get: thrower(inner), enumerable: true })
    ),
    tie("value").map(
      (inner): Recipe =>
        () => ({ block: true, reason: inner() })
    ),
    tie("value").map(
      (inner): Recipe =>
        () => ({ args: { nested: [inner()] } })
    ),
    tie("value").map(
      (inner): Recipe =>
        () =>
          trapProxy(thrower(inner))
    ),
    tie("value").map(
      (inner): Recipe =>
        () => {
          const error = new Error("wrapped")
          Object.defineProperty(error, "stack", { get: thrower(inner) })
          return error
        }
    ),
    tie("value").map(
      (inner): Recipe =>
        () => ({ then: (_: unknown, reject: (e: unknown) => void) => reject(inner()) })
    )
  )
})).value

type How = (typeof failures)[number] | (typeof returns)[number]

/** Hands `make()` over the way `how` says; for the types, a reply (it is anything at run time). */
const handOver = (
  how: How,
  make: Recipe
): { block: true } | PromiseLike<{ block: true }> | Effect.Effect<{ block: true }, unknown> => {
  switch (how) {
    case "throw":
      throw make()
    case "reject":
      return Promise.reject(make())
    case "fail":
      return Effect.fail(make())
    case "die":
      return Effect.die(make())
    case "return":
      return make() as { block: true }
    case "resolve":
      return Promise.resolve(make() as { block: true })
    case "succeed":
      return Effect.succeed(make() as { block: true })
  }
}

describe("the SDK's answer to any hostile value (property, in-process)", () => {
  let current: { how: How; make: Recipe } = { how: "return", make: () => ({}) }
  const logged: Array<unknown> = []
  const handlers = { tool_call: () => handOver(current.how, current.make) }
  const plain = Extension.respond(handlers, (_, message) => void logged.push(message))
  const effect = EffectExtension.respond(handlers)
  const quiet = <A, E>(e: Effect.Effect<A, E>) => Effect.provideService(e, References.MinimumLogLevel, "None")

  it("is one JSON object line, exactly failed (with the id) for a throw, rejection or failure; the log gets text", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom<How>(...failures, ...returns), recipe, async (how, make) => {
        current = { how, make }
        logged.length = 0
        const line = JSON.stringify({ ...toolCall("any", {}), id: 1 })
        for (const reply of [await plain(line), await Effect.runPromise(quiet(effect(line)))]) {
          expect(reply.endsWith("\n")).toBe(true)
          expect(reply.indexOf("\n")).toBe(reply.length - 1)
          const parsed: unknown = JSON.parse(reply)
          expect(parsed).toEqual(expect.objectContaining({ id: 1 }))
          if ((failures as ReadonlyArray<How>).includes(how)) expect(parsed).toEqual({ ...handlerFailed, id: 1 })
        }
        for (const message of logged) expect(typeof message).toBe("string")
      }),
      { numRuns: 500 }
    )
  })
})
