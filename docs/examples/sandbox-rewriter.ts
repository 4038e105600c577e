/**
 * sandbox-rewriter: runs every bash command under a sandbox wrapper.
 *
 *   SANDBOX_WRAPPER=sandbox-run node sandbox-rewriter.ts
 *
 * `ls -la && make` becomes `sandbox-run -- bash -c 'ls -la && make'`: the whole command line goes inside, so
 * `&&`, pipes and redirections stay sandboxed. Already-wrapped commands are left alone, so the rewrite
 * settles in one extra round instead of wrapping forever. Other args (a description, a timeout) are kept.
 */
import { Extension } from "@abhed/extension"
import { Effect } from "effect"

/** Single-quote for bash: `'` becomes `'\''`. */
export const shellQuote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`

export const prefix = (wrapper: string): string => `${wrapper} -- bash -c `

export const wrap = (wrapper: string, command: string): string =>
  command.startsWith(prefix(wrapper)) ? command : `${prefix(wrapper)}${shellQuote(command)}`

export const handlers = (wrapper: string): Extension.Handlers => ({
  tool_call: (req) => {
    const command = req.args["command"]
    if (req.tool !== "bash" || typeof command !== "string") return Effect.succeed({})
    const wrapped = wrap(wrapper, command)
    return Effect.succeed(wrapped === command ? {} : { args: { ...req.args, command: wrapped } })
  }
})

if (import.meta.main) Extension.main(handlers(process.env["SANDBOX_WRAPPER"] ?? "sandbox-run"))
