import { EffectExtension } from "@abhed/extension/effect"
import { Console, Effect, Option, Result, Stdio } from "effect"
import type { Command } from "effect/cli"
import { InputUnreadable } from "../CliError.ts"
import { Version } from "../Version.ts"
import { failUsage } from "../Usage.ts"
import { open } from "./McpConnection.ts"
import { type flags, targetOf } from "./McpFlags.ts"
import { handlers } from "./McpSession.ts"
import { watchingStdin } from "./McpSpokenTo.ts"

/** What `abhed-ext mcp` does once its flags are parsed (McpCommand.ts): connect to the server, serve the extension. */
export const serveMcp = Effect.fn("mcp")(function* ({
  args,
  command,
  header,
  name,
  startupTimeoutMs,
  timeoutMs,
  url
}: Command.Command.Config.Infer<typeof flags>) {
  const parsed = targetOf({ args, command, header, name, url }, process.env)
  if (Result.isFailure(parsed)) return yield* failUsage(["abhed-ext", "mcp"], parsed.failure)
  const connection = yield* open(parsed.success.target, { name: "abhed-ext-mcp", version: Version }, (text) =>
    console.error(`abhed-ext mcp ${parsed.success.name}: ${text}`)
  )
  const { mcpClientProblem, stdio } = yield* watchingStdin
  yield* EffectExtension.run(
    handlers({
      name: parsed.success.name,
      timeoutMs,
      startupTimeoutMs: Option.getOrElse(startupTimeoutMs, () => timeoutMs),
      connection
    })
  ).pipe(
    Effect.provideService(Stdio.Stdio, stdio),
    // One line, the last on stderr (the host shows it as the cause), not a stack trace; exit 1, then on_failure.
    Effect.catchTag("UnreadableRequest", ({ reason }) => {
      const why = mcpClientProblem() ?? reason
      return Effect.andThen(Console.error(`abhed-ext mcp: ${why}`), new InputUnreadable({ file: "stdin", detail: why }))
    })
  )
}, Effect.scoped)
