import { compileInputSchema } from "@abhed/core"
import { ExtensionHost } from "@abhed/host"
import { canonicalJson, isJsonObject } from "@abhed/protocol"
import { Effect, Option, Result, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { ArgsSchema } from "./ArgsSchema.ts"
import { JudgedCall } from "./JudgedCall.ts"
import { toContent } from "./ToolArgs.ts"

/**
 * The tools extensions declare (`host.tools`, after the host's collision and schema checks) as effect/ai tools.
 * Each is a `Tool.dynamic` with the declared `input_schema` (the provider shows the model exactly that schema) and
 * the schema compiled to an Effect Schema as its `ArgsSchema`: `GuardedToolkit` checks the model's args against it
 * before anything is sent, and the handler checks again before `invoke_tool`. The result is the owner's `result`
 * (a string, or any JSON); an `is_error` reply, and an owner that is gone, are failures the model reads as text.
 *
 * Like any tool, an extension tool's call must go through `tool_call` and its result through `tool_result`: give
 * the model these tools only through `GuardedToolkit` (`GuardedToolkit.withExtensionTools` does both). The handler
 * makes sure: it invokes the owner only with the args the guard settled (`JudgedCall`), and refuses anything else.
 */
export interface ExtensionTool
  extends Tool.Tool<
    string,
    {
      readonly parameters: typeof Schema.Unknown
      readonly success: typeof Schema.Unknown
      readonly failure: typeof Schema.String
      readonly failureMode: "return"
    }
  > {}

export type ExtensionTools = { readonly [name: string]: ExtensionTool }

export const make: Effect.Effect<Toolkit.WithHandler<ExtensionTools>, never, ExtensionHost> = Effect.gen(function* () {
  const host = yield* ExtensionHost
  const tools: Array<ExtensionTool> = []
  const handlers: Record<
    string,
    (params: unknown, context: { readonly toolCallId?: string | undefined }) => Effect.Effect<unknown, string>
  > = {}
  for (const { extension: owner, tool: declared } of yield* host.tools) {
    // The host rejects a declaration it cannot compile (audited); a host that did not (a mock) loses the tool here.
    const compiled = compileInputSchema(declared.input_schema)
    if (Result.isFailure(compiled)) continue
    const argsSchema = compiled.success
    const schemaText = canonicalJson(declared.input_schema)
    tools.push(
      Tool.dynamic(declared.name, {
        description: declared.description,
        parameters: declared.input_schema,
        success: Schema.Unknown,
        failure: Schema.String,
        failureMode: "return"
      }).annotate(ArgsSchema, argsSchema)
    )
    handlers[declared.name] = (params, context) =>
      Effect.gen(function* () {
        const judged = yield* Effect.serviceOption(JudgedCall)
        if (
          Option.isNone(judged) ||
          judged.value.tool !== declared.name ||
          canonicalJson(judged.value.args) !== canonicalJson(params)
        ) {
          return yield* Effect.fail(
            `${declared.name} was not called through GuardedToolkit, so no extension judged it: refused`
          )
        }
        const checked = Schema.decodeUnknownResult(argsSchema)(params)
        if (Result.isFailure(checked) || !isJsonObject(params)) {
          const why = Result.isFailure(checked) ? checked.failure.message : "args must be a JSON object"
          return yield* Effect.fail(`args do not match ${declared.name}'s input_schema: ${why}`)
        }
        // A reload re-lists the tools: a name may now be another extension's, or take other args. The model was
        // shown this declaration and its args were checked against it: refused rather than sent to another owner.
        const now = (yield* host.tools).find((t) => t.tool.name === declared.name)
        if (now === undefined || now.extension !== owner || canonicalJson(now.tool.input_schema) !== schemaText) {
          return yield* Effect.fail(
            `${declared.name} is no longer the tool this toolkit offered (the host's tools changed since it was made, ` +
              `by a reload): refused; make the toolkit again to offer the tools as they are`
          )
        }
        const out = yield* host
          .invokeTool({ tool: declared.name, args: params, call_id: context.toolCallId })
          .pipe(Effect.mapError((e) => e.message))
        return out.is_error ? yield* Effect.fail(toContent(out.result)) : out.result
      })
  }
  const toolkit = Toolkit.make(...tools)
  return yield* toolkit.pipe(Effect.provide(toolkit.toLayer(handlers)))
})

/**
 * The agent's tools and the extensions' by name: any name may be an extension's (they are known only at run time),
 * so a tool is one of the agent's or an `ExtensionTool`. Exact, so what the handlers need and how they fail is what
 * the agent's tools need and how they fail (an `ExtensionTool` needs nothing and fails as a result).
 */
export type WithExtensions<Tools extends Record<string, Tool.Any>> = {
  readonly [name: string]: Tools[keyof Tools] | ExtensionTool
}

/**
 * The agent's own tools and the extensions' in one handled toolkit. The agent's tool wins a name both have,
 * compared ignoring case as the host compares tool names (docs/design.md#combination): an extension's `READ` must
 * not sit beside the agent's `read` for the model to confuse. Give the host your tool names as `builtinTools` and it
 * rejects such a declaration, audited, before it gets here.
 */
export const merge = <Tools extends Record<string, Tool.Any>>(
  own: Toolkit.WithHandler<Tools>,
  extensions: Toolkit.WithHandler<ExtensionTools>
): Toolkit.WithHandler<WithExtensions<Tools>> => {
  const ownNames = new Set(Object.keys(own.tools).map((name) => name.toLowerCase()))
  const theirs = Object.entries(extensions.tools).filter(([name]) => !ownNames.has(name.toLowerCase()))
  const tools: WithExtensions<Tools> = { ...Object.fromEntries(theirs), ...own.tools }
  return {
    tools,
    // `own.tools` has the name: `params` are that tool's (the caller's, as for any handled toolkit).
    handle: (name, params, toolCallId, options) => {
      const key = String(name)
      return Object.hasOwn(own.tools, key)
        ? own.handle(key, params as Tool.ParametersEncoded<Tools[keyof Tools]>, toolCallId, options)
        : Object.hasOwn(tools, key)
          ? extensions.handle(key, params as Tool.ParametersEncoded<ExtensionTool>, toolCallId, options)
          : // A shadowed extension tool is not in the toolkit: refused as any unknown tool is.
            own.handle(key, params as Tool.ParametersEncoded<Tools[keyof Tools]>, toolCallId, options)
    }
  }
}
