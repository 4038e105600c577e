import { printable } from "@abhed/host/Printable"
import { decodeConfig } from "@abhed/protocol"
import { Console, Effect, Option, Result } from "effect"
import { Command } from "effect/cli"
import { AdapterWouldNotStart, InputUnreadable } from "../CliError.ts"
import { writeConfig } from "../ImportFlags.ts"
import { ConfigSchemaUrl } from "../hook/HookConfig.ts"
import { adapterLaunch, configFolder, projectDir, readInput, relativeCwd } from "../hook/ImportHooksCommand.ts"
import { parseMcpFile } from "./McpFile.ts"
import { DefaultCallTimeoutMs, type McpImport, readMcpServers } from "./McpServers.ts"
import { adapterProblems } from "./McpStartCheck.ts"
import type { flags } from "./ImportMcpCommand.ts"

/** What every imported server gets that differs from the peer, whatever the file says: said on stderr. */
const importNotes = (imported: McpImport, inHost: boolean): ReadonlyArray<string> =>
  imported.extensions.length === 0
    ? []
    : [
        "environment: each server runs with its extension's environment, not your shell's: a baseline (PATH, HOME, " +
          "USER, LANG, TMPDIR, …), the extension's env, and the variables its env_passthrough names; a token reaches a " +
          "server only when its extension passes it",
        inHost
          ? `timeouts: each tool call is bounded by four fifths of its extension's timeout_ms (${DefaultCallTimeoutMs} ms ` +
            "where the file set no timeout) and fails past it"
          : `timeouts: each tool call is bounded by the adapter's --timeout-ms (${DefaultCallTimeoutMs} ms where the file set ` +
            "no timeout) and fails past it; the extension's timeout_ms is 1 s above it",
        ...(imported.deny.length === 0 ? [] : [`policy: ${imported.deny.length} deny rule(s) written for excludeTools`])
      ]

/** What `abhed-ext import-mcp` does once its flags are parsed (ImportMcpCommand.ts). */
export const importMcpMain = Effect.fn("import-mcp")(
  function* ({ adapterCommand, file, format, inHost, output, thisCli }: Command.Command.Config.Infer<typeof flags>) {
    const text = yield* readInput(file)
    const parsed = parseMcpFile(file === "-" ? undefined : file, text, Option.getOrUndefined(format))
    if (Result.isFailure(parsed)) return yield* new InputUnreadable({ file, detail: parsed.failure })
    const launch = adapterLaunch(thisCli, adapterCommand)
    const configDir = configFolder(output)
    const read = readMcpServers(parsed.success.format, parsed.success.settings, {
      launch,
      inHost,
      cwd: relativeCwd(configDir, projectDir(file))
    })
    if (Result.isFailure(read)) return yield* new InputUnreadable({ file, detail: read.failure })
    const imported = read.success
    // The file's own text (names, commands) is shown escaped: a hostile file must not drive the terminal.
    for (const s of imported.skipped) yield* Console.error(printable(`${file}: ${s.where}: not carried over: ${s.why}`))
    for (const w of imported.warnings)
      yield* Console.error(printable(`${file}: ${w.where}: carried over, but ${w.why}`))
    yield* Console.error(
      `${file}: ${imported.extensions.length} ${imported.format === "claude" ? "Claude Code" : "Gemini CLI"} MCP server(s) carried over` +
        (imported.skipped.length > 0 ? `, ${imported.skipped.length} not (above)` : "")
    )
    const config = {
      $schema: ConfigSchemaUrl,
      extensions: imported.extensions,
      ...(imported.deny.length === 0 ? {} : { policy: { deny: imported.deny } })
    }
    // What is written must be a config `run` accepts (a NUL in an argument, say, is not): else nothing is written.
    const valid = decodeConfig(config)
    if (Result.isFailure(valid)) {
      return yield* new AdapterWouldNotStart({
        problems: valid.failure.issues.map((issue) =>
          printable(`${file}: the generated config would be refused: ${issue.path}: ${issue.message}`)
        )
      })
    }
    // Start-check: every adapter's command line goes through the adapter's own parser and checks.
    const refused = yield* adapterProblems(imported, launch)
    if (refused.length > 0) {
      return yield* new AdapterWouldNotStart({ problems: refused.map((problem) => printable(`${file}: ${problem}`)) })
    }
    for (const note of importNotes(imported, inHost)) yield* Console.error(`${file}: ${note}`)
    yield* writeConfig(config, output, file)
  },
  Effect.tapError((e) => Console.error(printable(e.message)))
)
