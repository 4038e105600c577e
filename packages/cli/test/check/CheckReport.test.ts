import { describe, expect, it } from "vitest"
import { renderText } from "../../src/check/CheckReport.ts"
import type { CheckResult } from "../../src/check/CheckResult.ts"
import { plain } from "../../src/Style.ts"

/** What `check` prints of the extension's stderr: on a failure, and on a pass too (what it warns of). */

const pass: CheckResult = { id: "starts", title: "starts", status: "pass", details: [] }
const fail: CheckResult = { id: "starts", title: "starts", status: "fail", details: ["exited (code 1)"] }

describe("renderText: the extension's stderr", () => {
  it("a pass shows what it wrote, escaped: an MCP adapter's server that never started is said only there", () => {
    const tail =
      "abhed-ext mcp web: the MCP server did not start: connect ECONNREFUSED; no tools declared\n\u001b]0;x\u0007\n"
    const text = renderText("abhed-ext mcp --url …", [pass], tail, plain)
    expect(text.split("\n")).toEqual([
      "abhed-ext check: abhed-ext mcp --url …",
      "PASS  starts: starts",
      "ok: 1/1 checks passed",
      "extension stderr (last lines; it passed):",
      "  | abhed-ext mcp web: the MCP server did not start: connect ECONNREFUSED; no tools declared",
      "  | \\x1b]0;x\\x07"
    ])
  })

  it("a failure names the line that says why first; nothing is shown when stderr was empty", () => {
    const failed = renderText("x", [fail], "Traceback (most recent call last):\nValueError: bad config\n", plain)
    expect(failed).toContain("extension error (its stderr): ValueError: bad config")
    expect(failed).toContain("extension stderr (last lines):")
    expect(renderText("x", [pass], " \n", plain)).not.toContain("stderr")
  })
})
