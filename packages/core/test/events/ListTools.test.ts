import type { ListToolsReply } from "@abhed/protocol"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ListTools from "../../src/events/ListTools.ts"
import { answerOf, answers, foldArrivals, runs } from "./arbitraries.ts"

const tool = (name: string) => ({ name, description: "d", input_schema: { type: "object" } })
const reply: fc.Arbitrary<ListToolsReply> = fc.record({
  tools: fc.array(fc.constantFrom("t1", "t2", "Bash", "x y").map(tool), { maxLength: 3 })
})

describe("ListTools rule", () => {
  it("rejects collisions and bad names, each with its note (look-alikes escaped)", () => {
    const { notes, outcome } = ListTools.finish(
      ["bash"],
      [answerOf("a", { tools: [tool("BASH"), tool("t")] }), answerOf("b", { tools: [tool("t"), tool("b\u0430sh")] })]
    )
    expect(outcome.accepted).toEqual([])
    expect(notes).toEqual([
      'tool "BASH" rejected for a: collides with a built-in tool (names compare ignoring case)',
      'tool "b\\u0430sh" rejected for b: not a valid tool name (letters, digits, _ and - only, 1 to 64 characters; not __proto__)',
      'tool "t" rejected for a, b: declared more than once (names compare ignoring case)'
    ])
  })

  it("the outcome does not depend on the order the answers arrive in", () => {
    fc.assert(
      fc.property(
        answers(reply).chain((xs) => fc.tuple(fc.constant(xs), fc.shuffledSubarray(xs, { minLength: xs.length }))),
        ([xs, ys]) => {
          const { reducer } = ListTools
          expect(ListTools.finish(["bash"], foldArrivals(reducer, ys))).toEqual(
            ListTools.finish(["bash"], foldArrivals(reducer, xs))
          )
        }
      ),
      runs
    )
  })
})
