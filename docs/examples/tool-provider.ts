/**
 * tool-provider: adds two tools the model can call.
 *
 *   node tool-provider.ts
 *
 * `word_count` counts lines, words and characters of a text; `json_format` pretty-prints JSON text. Their
 * results still go through tool_call and tool_result like any tool's, so other extensions and the policy
 * judge them too.
 */
import { Extension } from "@abhed/extension"
import type { ToolDeclaration } from "@abhed/extension"
// Per module, not the "effect" index, which loads all of effect: about 0.4 s more CPU at every start.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export const Tools: ReadonlyArray<ToolDeclaration> = [
  {
    name: "word_count",
    description: "Count the lines, words and characters of a text.",
    input_schema: {
      type: "object",
      properties: { text: { type: "string", description: "The text to count." } },
      required: ["text"]
    }
  },
  {
    name: "json_format",
    description: "Pretty-print JSON text, or report where it is invalid.",
    input_schema: {
      type: "object",
      properties: {
        json: { type: "string", description: "The JSON text." },
        indent: { type: "integer", minimum: 0, maximum: 8, description: "Spaces per level (default 2)." }
      },
      required: ["json"]
    }
  }
]

const WordCountArgs = Schema.Struct({ text: Schema.String })
const JsonFormatArgs = Schema.Struct({
  json: Schema.String,
  indent: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 8 })))
})

export const wordCount = (text: string) => ({
  lines: text === "" ? 0 : text.split(/\r\n|\r|\n/).length - (/(\r\n|\r|\n)$/.test(text) ? 1 : 0),
  words: text.split(/\s+/).filter((w) => w !== "").length,
  characters: [...text].length
})

const failed = (message: string) => ({ result: message, is_error: true })

export const invoke = (tool: string, args: unknown): Effect.Effect<{ result: unknown; is_error?: boolean }> => {
  switch (tool) {
    case "word_count":
      return Schema.decodeUnknownEffect(WordCountArgs)(args).pipe(
        Effect.map(({ text }) => ({ result: wordCount(text) })),
        Effect.catch((error) => Effect.succeed(failed(`invalid arguments: ${error.message}`)))
      )
    case "json_format":
      return Schema.decodeUnknownEffect(JsonFormatArgs)(args).pipe(
        Effect.map(({ indent, json }) => {
          try {
            return { result: JSON.stringify(JSON.parse(json), null, indent ?? 2) }
          } catch (error) {
            return failed(`invalid JSON: ${error instanceof Error ? error.message : String(error)}`)
          }
        }),
        Effect.catch((error) => Effect.succeed(failed(`invalid arguments: ${error.message}`)))
      )
    default:
      return Effect.succeed(failed(`unknown tool: ${tool}`))
  }
}

if (import.meta.main) {
  Extension.main({
    list_tools: () => Effect.succeed({ tools: Tools }),
    invoke_tool: (req) => invoke(req.tool, req.args)
  })
}
