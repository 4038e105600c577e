// A TypeScript extension with Effect handlers against the installed @abhed/extension (run with Node's type
// stripping: this file is outside node_modules).
import { Extension } from "@abhed/extension"
import { Effect } from "effect"

Extension.main({
  tool_call: (req) =>
    Effect.gen(function* () {
      yield* Effect.log(`checking ${req.tool}`) // stderr
      return req.tool === "write" ? { ask: true, reason: "writes need a look" } : {}
    })
})
