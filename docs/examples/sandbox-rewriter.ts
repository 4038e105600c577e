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

/** Single-quote for bash: `'` becomes `'\''`. */
export const shellQuote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`

export const prefix = (wrapper: string): string => `${wrapper} -- bash -c `

// One single-quoted bash word as shellQuote writes it: '…' pieces joined by \' (an escaped quote).
const QuotedWord = /^'[^']*'(?:\\''[^']*')*$/

/**
 * Already wrapped means: the prefix, then exactly one quoted word. Checking the prefix alone would let
 * `sandbox-run -- bash -c 'true'; rm -rf ~` through, with `rm` running outside the sandbox.
 */
export const isWrapped = (wrapper: string, command: string): boolean =>
  command.startsWith(prefix(wrapper)) && QuotedWord.test(command.slice(prefix(wrapper).length))

export const wrap = (wrapper: string, command: string): string =>
  isWrapped(wrapper, command) ? command : `${prefix(wrapper)}${shellQuote(command)}`

export const handlers = (wrapper: string): Extension.Handlers => ({
  tool_call: (req) => {
    const command = req.args["command"]
    if (req.tool !== "bash" || typeof command !== "string") return {}
    const wrapped = wrap(wrapper, command)
    return wrapped === command ? {} : { args: { ...req.args, command: wrapped } }
  }
})

if (import.meta.main) Extension.main(handlers(process.env["SANDBOX_WRAPPER"] ?? "sandbox-run"))
