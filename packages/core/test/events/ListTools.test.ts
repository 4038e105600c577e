import type { ListToolsReply } from "@abhed/protocol"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ListTools from "../../src/events/ListTools.ts"
import { answerOf, answers, foldArrivals, runs } from "./arbitraries.ts"

const tool = (name: string) => ({ name, description: "d", input_schema: { type: "object" } })
const reply: fc.Arbitrary<ListToolsReply> = fc.record(
  {
    tools: fc.array(fc.constantFrom("t1", "t2", "Bash", "x y").map(tool), { maxLength: 3 }),
    warnings: fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 })
  },
  { requiredKeys: ["tools"] }
)

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

  it("an extension's warnings: in the outcome and the notes, by extension name, bounded in number and length", () => {
    const many = Array.from({ length: ListTools.MaxWarnings + 3 }, (_, i) => `w${i}`)
    const { notes, outcome } = ListTools.finish(
      [],
      [
        answerOf("a", { tools: [], warnings: many }),
        answerOf("b", { tools: [tool("t")], warnings: ["x".repeat(ListTools.WarningMax + 50)] }),
        answerOf("c", { tools: [tool("u")] })
      ]
    )
    expect(outcome.warnings?.map((w) => w.extension)).toEqual([
      ...many.slice(0, ListTools.MaxWarnings).map(() => "a"),
      "a",
      "b"
    ])
    expect(outcome.warnings?.at(ListTools.MaxWarnings)?.text).toBe("and 3 more warnings, not shown")
    expect(outcome.warnings?.at(-1)?.text).toBe(`${"x".repeat(ListTools.WarningMax - 1)}…`)
    expect(notes[0]).toBe("extension a warns: w0")
    expect(notes).toHaveLength(ListTools.MaxWarnings + 2)
    // None given: no `warnings` in the outcome at all.
    expect(ListTools.finish([], [answerOf("c", { tools: [tool("u")] })]).outcome).not.toHaveProperty("warnings")
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
