import { ExtensionToolkit, GuardedToolkit } from "@abhed/ai"
import type { AcceptedTool } from "@abhed/core"
import { ExtensionHost } from "@abhed/host"
import type { JsonObject } from "@abhed/protocol"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"

/**
 * A toolkit made before a reload (docs/embedding.md#reload): the host re-lists the tools, and a name the toolkit
 * offers may now be another extension's, with other args. The model was shown the old declaration and its args
 * were checked against it: the call is refused, never sent to the new owner; an unchanged tool still runs.
 */

const weather = (extension: string, schema: JsonObject): AcceptedTool => ({
  extension,
  tool: { name: "weather", description: `${extension}'s weather`, input_schema: schema }
})
const byCity = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
const byZip = { type: "object", properties: { zip: { type: "integer" } }, required: ["zip"] }

/** A host whose tools a test switches, as a reload does; every call allowed as it came. */
const reloadable = (first: ReadonlyArray<AcceptedTool>) => {
  let tools = first
  const invoked: Array<readonly [string, JsonObject]> = []
  const layer = ExtensionHost.layerMock({
    tools: Effect.sync(() => tools),
    toolCall: (call) => Effect.succeed({ decision: "allow", reasons: [], args: call.args, rounds: 1 }),
    toolResult: (result) => Effect.succeed({ content: result.content, is_error: result.is_error, rounds: 1 }),
    invokeTool: (call) =>
      Effect.sync(() => {
        invoked.push([tools.find((t) => t.tool.name === call.tool)?.extension ?? "nobody", call.args])
        return { result: "sunny", is_error: false }
      })
  })
  return { layer, invoked, reload: (next: ReadonlyArray<AcceptedTool>) => (tools = next) }
}

const call = (toolkit: GuardedToolkit.Guarded<ExtensionToolkit.ExtensionTools>, id: string) =>
  toolkit.handle("weather", { city: "Pune" }, id).pipe(Effect.flatMap(Stream.runCollect))

describe("an extension tool after a reload", () => {
  it.effect("now another extension's, with other args: refused, never sent to the new owner", () => {
    const host = reloadable([weather("wx", byCity)])
    return Effect.gen(function* () {
      const toolkit = yield* GuardedToolkit.guard(ExtensionToolkit.make)
      const before = yield* call(toolkit, "c1")
      assert.strictEqual(before[0]?.result, "sunny")
      host.reload([weather("zipper", byZip)])
      const after = yield* call(toolkit, "c2")
      assert.isTrue(after[0]?.isFailure)
      assert.include(String(after[0]?.result), "weather is no longer the tool this toolkit offered")
      assert.deepStrictEqual(host.invoked, [["wx", { city: "Pune" }]])
    }).pipe(Effect.provide(host.layer))
  })

  it.effect("the same owner with another schema, and a tool gone: refused; the same declaration again: runs", () => {
    const host = reloadable([weather("wx", byCity)])
    return Effect.gen(function* () {
      const toolkit = yield* GuardedToolkit.guard(ExtensionToolkit.make)
      host.reload([weather("wx", byZip)])
      assert.isTrue((yield* call(toolkit, "c1"))[0]?.isFailure)
      host.reload([])
      assert.isTrue((yield* call(toolkit, "c2"))[0]?.isFailure)
      host.reload([weather("wx", byCity)])
      assert.strictEqual((yield* call(toolkit, "c3"))[0]?.result, "sunny")
      assert.deepStrictEqual(host.invoked, [["wx", { city: "Pune" }]])
    }).pipe(Effect.provide(host.layer))
  })
})
