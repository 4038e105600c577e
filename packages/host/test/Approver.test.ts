import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Approval, type ToolCallOutcome } from "../src/index.ts"

const outcome = (decision: ToolCallOutcome["decision"]): ToolCallOutcome => ({
  decision,
  reasons: decision === "allow" ? [] : [{ extension: "guard", reason: "why" }],
  args: { command: "git push" },
  rounds: 1
})

describe("Approver", () => {
  it.effect("allow runs and deny does not, whatever the approver would say", () =>
    Effect.gen(function* () {
      assert.isTrue(yield* Approval.resolve("bash", outcome("allow")))
      assert.isFalse(yield* Approval.resolve("bash", outcome("deny")))
    }).pipe(Effect.provide(Approval.Approver.layer(() => Effect.succeed(true))))
  )

  it.effect("ask is the approver's call, and it sees the settled args and the reasons", () =>
    Effect.gen(function* () {
      const seen: Array<Approval.ApprovalRequest> = []
      const yes = Approval.Approver.layer((request) => Effect.sync(() => (seen.push(request), true)))
      assert.isTrue(yield* Approval.resolve("bash", outcome("ask")).pipe(Effect.provide(yes)))
      assert.deepStrictEqual(seen, [
        { tool: "bash", args: { command: "git push" }, reasons: [{ extension: "guard", reason: "why" }] }
      ])
      assert.isFalse(yield* Approval.resolve("bash", outcome("ask")).pipe(Effect.provide(Approval.Approver.layerDeny)))
    })
  )
})
