import type { EventName } from "@abhed/extension"
import { Extension } from "@abhed/extension"
import { EffectExtension } from "@abhed/extension/effect"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { request, toolCall, toolResult } from "./ExtensionProcess.ts"

/**
 * A handler may say itself that it could not answer, for any event: `{ failed: "why" }` type-checks as what it
 * returns (no cast: `pnpm typecheck` compiles this file) and is sent as that alone (docs/extensions.md).
 */

const Why = "the rules file is not readable"
/** A reply line, exactly: one JSON object and its newline. */
const sent = (reply: object) => `${JSON.stringify(reply)}\n`

// Every event's handler may return it: plain, as a Promise, as an Effect. (Before, no reply type held `failed`:
// each of these failed to compile, "has no properties in common with type".)
const everyEvent: { readonly [E in EventName]-?: Extension.Handler<E> } = {
  tool_call: () => ({ failed: Why }),
  tool_result: async () => ({ failed: Why }),
  context: () => Effect.succeed({ failed: Why }),
  before_agent_start: () => ({ failed: Why }),
  before_compact: () => ({ failed: Why }),
  list_tools: () => ({ failed: Why }),
  invoke_tool: () => ({ failed: Why }),
  session_start: () => ({ failed: Why }),
  session_end: () => ({ failed: Why })
}

// A branch that answers, beside one that cannot: the reply type is the union of both.
const guard: Extension.Handler<"tool_call"> = (req) =>
  typeof req.args["command"] !== "string" ? { failed: "no command to judge" } : { block: true, reason: "no" }

// The why is a string, as the protocol says; any other type is a malformed reply.
// @ts-expect-error a number is no why
const wrong: Extension.Handler<"tool_call"> = () => ({ failed: 1 })

describe("a handler that returns { failed }", () => {
  it("is sent as {failed} alone, for any event, from a plain value, a Promise or an Effect", async () => {
    const respond = Extension.respond(everyEvent, () => {})
    expect(await respond(JSON.stringify(toolCall("bash", { command: "ls" })))).toBe(sent({ failed: Why }))
    expect(await respond(JSON.stringify(toolResult("bash", "out")))).toBe(sent({ failed: Why }))
    expect(await respond(JSON.stringify(request("context", { messages: [] })))).toBe(sent({ failed: Why }))
    expect(await respond(JSON.stringify(request("session_start")))).toBe(sent({ failed: Why }))
  })

  it("alone: the fields beside it are not sent (a block beside failed is no block)", async () => {
    const respond = Extension.respond({ tool_call: () => ({ failed: Why, block: true, reason: "x" }) }, () => {})
    expect(await respond(JSON.stringify(toolCall("bash", {})))).toBe(sent({ failed: Why }))
    const branches = Extension.respond({ tool_call: guard }, () => {})
    expect(await branches(JSON.stringify(toolCall("bash", {})))).toBe(sent({ failed: "no command to judge" }))
  })

  it("EffectExtension's handlers too", async () => {
    const respond = EffectExtension.respond({ tool_call: () => Effect.succeed({ failed: Why }) })
    expect(await Effect.runPromise(respond(JSON.stringify(toolCall("bash", {}))))).toBe(sent({ failed: Why }))
  })

  it("a why of another type is not sent as it is: the SDK answers failed in its own words", async () => {
    const answered = await Extension.respond({ tool_call: wrong }, () => {})(JSON.stringify(toolCall("bash", {})))
    expect(JSON.parse(answered)).toEqual({
      failed: "the tool_call handler returned what is not a reply (its error is on the extension's stderr)"
    })
  })
})
