import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

/**
 * Drives an extension as a real child process, the way the host does: one request line in, one reply line
 * out. Test support only.
 */

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
export const examples = fileURLToPath(new URL("../../../docs/examples/", import.meta.url))
export const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url))

export interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** Everything the process wrote to stdout. */
  readonly stdout: string
  readonly stderr: string
}

export interface ExtensionProcess {
  /** Write one request line and wait for the next reply line. */
  readonly send: (request: unknown) => Promise<unknown>
  /** Write raw text (may hold several lines, or a bad one). */
  readonly write: (text: string | Uint8Array) => void
  /** The next reply line, parsed. */
  readonly next: () => Promise<unknown>
  /** Close stdin and wait for exit. */
  readonly close: () => Promise<Finished>
  /** Reply lines received so far, raw. */
  readonly lines: ReadonlyArray<string>
}

export const start = (
  command: string,
  args: ReadonlyArray<string>,
  options?: { readonly cwd?: string; readonly env?: Record<string, string> }
): ExtensionProcess => {
  const child = spawn(command, args, {
    cwd: options?.cwd ?? repoRoot,
    env: { ...process.env, ...options?.env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  let buffered = ""
  const lines: Array<string> = []
  let consumed = 0
  const waiters: Array<() => void> = []
  let exited: Finished | undefined
  const exitWaiters: Array<(f: Finished) => void> = []

  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (text: string) => {
    stdout += text
    buffered += text
    let newline = buffered.indexOf("\n")
    while (newline !== -1) {
      lines.push(buffered.slice(0, newline))
      buffered = buffered.slice(newline + 1)
      newline = buffered.indexOf("\n")
    }
    for (const wake of waiters.splice(0)) wake()
  })
  child.stderr.setEncoding("utf8")
  child.stderr.on("data", (text: string) => {
    stderr += text
  })
  child.on("close", (code, signal) => {
    exited = { code, signal, stdout, stderr }
    for (const wake of waiters.splice(0)) wake()
    for (const done of exitWaiters.splice(0)) done(exited)
  })

  const next = (): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const attempt = () => {
        const line = lines[consumed]
        if (line !== undefined) {
          consumed++
          try {
            resolve(JSON.parse(line))
          } catch (error) {
            reject(new Error(`reply is not JSON: ${JSON.stringify(line)} (${String(error)})`))
          }
        } else if (exited !== undefined) {
          reject(new Error(`process exited (${exited.code ?? exited.signal}) before replying; stderr:\n${stderr}`))
        } else {
          waiters.push(attempt)
        }
      }
      attempt()
    })

  const write = (text: string | Uint8Array) => {
    child.stdin.write(text)
  }

  return {
    write,
    next,
    send: (request) => {
      write(`${JSON.stringify(request)}\n`)
      return next()
    },
    close: () =>
      new Promise((resolve) => {
        if (exited !== undefined) return resolve(exited)
        exitWaiters.push(resolve)
        child.stdin.end()
      }),
    lines
  }
}

/** Send every request (pipelined), close stdin, and return the parsed replies with the exit status. */
export const exchange = async (
  command: string,
  args: ReadonlyArray<string>,
  requests: ReadonlyArray<unknown>,
  options?: { readonly cwd?: string; readonly env?: Record<string, string> }
): Promise<Finished & { readonly replies: ReadonlyArray<unknown> }> => {
  const ext = start(command, args, options)
  ext.write(requests.map((r) => `${JSON.stringify(r)}\n`).join(""))
  const finished = await ext.close()
  return { ...finished, replies: ext.lines.map((line) => JSON.parse(line)) }
}

/** A wire request with the fields every request carries. */
export const request = (event: string, fields: Record<string, unknown> = {}): Record<string, unknown> => ({
  event,
  session_id: "s-test",
  ...fields
})

export const toolCall = (tool: string, args: Record<string, unknown>, callId = "c-1") =>
  request("tool_call", { call_id: callId, tool, args })

export const toolResult = (tool: string, content: string, callId = "c-1") =>
  request("tool_result", { call_id: callId, tool, args: {}, content, is_error: false })
