import { spawn } from "node:child_process"
import { makeLineSplitter } from "./LineSplitter.ts"

/**
 * The raw baseline: the least a host can do for the same job with plain `node:child_process` and no Effect —
 * spawn, write a line, read a line, fan out with Promise.all. Like the host it keeps one request in flight per
 * extension (the protocol matches replies to requests by order) and parses every reply; it checks nothing else,
 * has no timeouts, no audit, no policy. Whatever the host does beyond this is what the ratios price.
 */

export interface RawExtension {
  readonly pid: number | undefined
  /** Write one request line and resolve with the parsed reply. Serialized: FIFO, one in flight. */
  readonly send: (line: Uint8Array) => Promise<unknown>
  /** Close stdin and wait for the process to exit (SIGKILL after `graceMs`). */
  readonly close: (graceMs?: number) => Promise<void>
}

/**
 * Where the extension process runs: `own` (the default) in a process group and session of its own, as the host
 * runs every extension (Node's `detached`: the host needs the group to end an extension's children with it, and
 * Node can make a group only with a session); `caller` in the client's own group and session. On Linux with
 * scheduler autogroups a session is also a scheduling group, which changes how the kernel interleaves the
 * processes (docs/benchmarks.md, scenario 1): both sides run the same arrangement so the ratio prices the host.
 */
export type RawSession = "own" | "caller"

export const spawnRaw = (command: string, args: ReadonlyArray<string>, session: RawSession = "own"): RawExtension => {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], detached: session === "own" })
  const splitter = makeLineSplitter()
  const waiting: Array<{ readonly resolve: (line: string) => void; readonly reject: (e: Error) => void }> = []
  let exited = false
  const exit = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true
      for (const w of waiting.splice(0)) w.reject(new Error(`extension ${command} exited`))
      resolve()
    })
  )
  child.once("error", (e) => {
    for (const w of waiting.splice(0)) w.reject(e)
  })
  child.stderr.resume() // drained, as the host does, so a chatty extension cannot block on a full pipe
  child.stdout.on("data", (chunk: Buffer) => {
    for (const line of splitter.push(chunk)) waiting.shift()?.resolve(line)
  })
  const exchange = (line: Uint8Array) =>
    new Promise<string>((resolve, reject) => {
      waiting.push({ resolve, reject })
      child.stdin.write(line)
    })
  let tail: Promise<unknown> = Promise.resolve()
  const send = (line: Uint8Array): Promise<unknown> => {
    const reply = tail.then(() => exchange(line))
    tail = reply.catch(() => undefined)
    return reply.then((text) => {
      const parsed: unknown = JSON.parse(text)
      return parsed
    })
  }
  const close = async (graceMs = 2000) => {
    if (exited) return
    child.stdin.end()
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs)
    await exit
    clearTimeout(timer)
  }
  return { pid: child.pid, send, close }
}

/** One request, encoded once, to every extension at once; the replies in extension order. */
export const rawDispatch = (
  extensions: ReadonlyArray<RawExtension>,
  value: unknown
): Promise<ReadonlyArray<unknown>> => {
  const line = Buffer.from(`${JSON.stringify(value)}\n`)
  return Promise.all(extensions.map((x) => x.send(line)))
}

/** Spawn, then the handshake the host does before it is ready: session_start, then list_tools. */
export const rawStartup = async (
  count: number,
  command: string,
  args: ReadonlyArray<string>,
  sessionId: string,
  session: RawSession = "own"
): Promise<ReadonlyArray<RawExtension>> => {
  const extensions = Array.from({ length: count }, () => spawnRaw(command, args, session))
  await rawDispatch(extensions, { event: "session_start", session_id: sessionId, id: "start" })
  await rawDispatch(extensions, { event: "list_tools", session_id: sessionId, id: "tools" })
  return extensions
}

export const closeAll = (extensions: ReadonlyArray<RawExtension>): Promise<unknown> =>
  Promise.all(extensions.map((x) => x.close()))

/**
 * What a hook system that spawns per event pays: start the extension, write the request, close stdin, read the
 * reply, wait for the process to exit.
 */
export const spawnPerEvent = (command: string, args: ReadonlyArray<string>, value: unknown): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] })
    const splitter = makeLineSplitter()
    let reply: string | undefined
    child.stdout.on("data", (chunk: Buffer) => {
      for (const line of splitter.push(chunk)) reply ??= line
    })
    child.once("error", reject)
    child.once("close", () => {
      if (reply === undefined) reject(new Error(`${command} exited without a reply`))
      else {
        const parsed: unknown = JSON.parse(reply)
        resolve(parsed)
      }
    })
    child.stdin.end(`${JSON.stringify(value)}\n`)
  })
