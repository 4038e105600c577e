// A plain-JavaScript extension against the installed @abhed/extension: blocks rm, upper-cases nothing.
import { Extension } from "@abhed/extension"

Extension.main({
  tool_call: (req) =>
    String(req.args["command"] ?? "").startsWith("rm ") ? { block: true, reason: "no rm here" } : {},
  tool_result: async (req) => ({ content: req.content.replaceAll("s3cr3t", "[redacted]") })
})
