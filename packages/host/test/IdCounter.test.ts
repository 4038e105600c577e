import { describe, expect, it } from "@effect/vitest"
import * as IdCounter from "../src/IdCounter.ts"

describe("IdCounter", () => {
  it("counts from 1 in plain decimal, with the prefix, each counter on its own", () => {
    const rounds = IdCounter.make()
    const calls = IdCounter.make("c-")
    expect([rounds(), rounds(), rounds()]).toEqual(["1", "2", "3"])
    expect([calls(), calls()]).toEqual(["c-1", "c-2"])
    for (let i = 4; i < 1_000_000; i++) rounds()
    // The digits String(n) would give (no exponent, no separator), past the first million.
    expect(rounds()).toBe(String(1_000_000))
  })
})
