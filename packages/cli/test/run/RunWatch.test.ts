import { describe, expect, it } from "vitest"
import { describeReload } from "../../src/run/RunWatch.ts"

/** What `run --watch` says of a reload. */

const report = { kept: ["g"], restarted: [], removed: [], added: [], before: "a", after: "a" }

describe("describeReload", () => {
  it("a reload that changed only the settings says so, not just which extensions it kept", () => {
    expect(describeReload(report)).toBe("kept g")
    expect(describeReload({ ...report, after: "b" })).toBe(
      "kept g; the policy, builtin_tools or max_rewrite_rounds changed"
    )
    expect(describeReload({ ...report, kept: [], after: "b" })).toBe(
      "the policy, builtin_tools or max_rewrite_rounds changed"
    )
    expect(describeReload({ ...report, kept: [], added: ["h"], after: "b" })).toBe("started h")
  })
})
