import { readdirSync, readFileSync, readlinkSync } from "node:fs"

/**
 * Finding and ending a hook's processes without giving it a session of its own. `detached` (setsid) would be the
 * easy way to a process group per run, but on Linux every new session gets a scheduler autogroup, and a hook run in
 * one measured about twice as slow as the same spawn without it (docs/hooks.md, "Cost"). So hooks run in the
 * adapter's own process group (which the host made for it), and these read /proc to end what a run left behind.
 * Where /proc is missing (not Linux), only the hook's own process is signalled.
 */

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

const signal = (pid: number, sig: NodeJS.Signals): boolean => {
  try {
    process.kill(pid, sig)
    return true
  } catch {
    return false
  }
}

/** The children of `pid`, over all its threads. */
const childrenOf = (pid: number): Array<number> => {
  let tasks: Array<string>
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return []
  }
  const out: Array<number> = []
  for (const tid of tasks) {
    for (const c of (read(`/proc/${pid}/task/${tid}/children`) ?? "").split(" "))
      if (c.trim() !== "") out.push(Number(c))
  }
  return out
}

/**
 * SIGKILL `pid` and every descendant. Each process is stopped (SIGSTOP) before its children are read, so none can
 * start another one meanwhile; then all are killed.
 */
export const killTree = (pid: number): void => {
  const found: Array<number> = []
  const queue = [pid]
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (found.includes(next) || !signal(next, "SIGSTOP")) continue
    found.push(next)
    queue.push(...childrenOf(next))
  }
  if (found.length === 0) signal(pid, "SIGKILL")
  for (const p of found) signal(p, "SIGKILL")
}

/** `pgrp` of a /proc/PID/stat line (the field after state and ppid; the name in parentheses may hold spaces). */
const groupOf = (stat: string): number | undefined => {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const pgrp = Number(fields[2])
  return Number.isInteger(pgrp) ? pgrp : undefined
}

/**
 * When this process leads its own process group (as every extension the host starts does), SIGKILL every other
 * member: helpers a hook left behind after its own process exited (they were re-parented, so no tree leads to them
 * any more). Returns whether it could: false when this process is not a group leader (started from a shell, its
 * group is the shell job's, which is not ours to end) or /proc is missing.
 */
export const killRestOfGroup = (): boolean => {
  const own = groupOf(read("/proc/self/stat") ?? "")
  if (own !== process.pid) return false
  let entries: Array<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return false
  }
  for (const entry of entries) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    const stat = read(`/proc/${entry}/stat`)
    if (stat !== undefined && groupOf(stat) === own) signal(pid, "SIGKILL")
  }
  return true
}

/**
 * What file descriptors `fds` of process `pid` are, when they are pipes or sockets (`pipe:[INODE]`,
 * `socket:[INODE]`): Node gives a child's stdio one end of a socket pair, whose other end (ours) has another
 * inode, so the child's own ends are read, while it runs.
 */
export const pipeEnds = (pid: number, fds: ReadonlyArray<number>): Array<string> =>
  fds.flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`)
      return target.startsWith("pipe:") || target.startsWith("socket:") ? [target] : []
    } catch {
      return []
    }
  })

/**
 * SIGKILL, with what they started, the other processes that hold one of `pipes` open (`pipeEnds`): a hook's stdout
 * and stderr, kept by helpers it left behind. They are found whatever their session or group (`setsid`, a
 * double-forked daemon), which neither the hook's tree nor our process group reaches. Returns how many were found.
 */
export const killPipeHolders = (pipes: ReadonlyArray<string>): number => {
  if (pipes.length === 0) return 0
  let entries: Array<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return 0
  }
  let found = 0
  for (const entry of entries) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    let fds: Array<string>
    try {
      fds = readdirSync(`/proc/${entry}/fd`)
    } catch {
      continue
    }
    const holds = fds.some((fd) => {
      try {
        return pipes.includes(readlinkSync(`/proc/${entry}/fd/${fd}`))
      } catch {
        return false
      }
    })
    if (holds) {
      found++
      killTree(pid)
    }
  }
  return found
}
