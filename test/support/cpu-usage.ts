import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * CPU time of this process and of the processes it has started and reaped (their children too, once reaped), in
 * seconds, from `/proc/self/stat` (Linux): Node has no API for the children's share. Undefined elsewhere.
 */
export interface CpuTimes {
  /** This process's user + system time. */
  readonly self: number
  /** The reaped children's user + system time (`cutime` + `cstime`). */
  readonly children: number
  /** The children's system part. */
  readonly childrenSystem: number
}

/** Clock ticks per second of `/proc/<pid>/stat`: 100 on every Linux Node runs on (USER_HZ). */
const TicksPerSecond = 100

/** The fields of a `/proc/<pid>/stat` line after the command name, which may hold spaces and parentheses. */
export const parseStat = (line: string): CpuTimes | undefined => {
  const end = line.lastIndexOf(") ")
  if (end < 0) return undefined
  // After "(comm) ": state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
  const fields = line.slice(end + 2).split(" ")
  const tick = (i: number) => Number(fields[i]) / TicksPerSecond
  const [utime, stime, cutime, cstime] = [tick(11), tick(12), tick(13), tick(14)]
  if (![utime, stime, cutime, cstime].every(Number.isFinite)) return undefined
  return { self: utime + stime, children: cutime + cstime, childrenSystem: cstime }
}

export const cpuTimes = (): CpuTimes | undefined => {
  try {
    return parseStat(NodeFs.readFileSync("/proc/self/stat", "utf8"))
  } catch {
    return undefined
  }
}

/**
 * A started process's line in the table: `node X` and `bash X` by their script's name (most of what the tests start
 * is one of the two), code given inline by its flag (`node -e`, `bash -c`), anything else by its command's name.
 */
export const commandKey = (command: string, args: unknown): string => {
  const name = NodePath.basename(command)
  if (!/^(node|bash|sh)$/.test(name) || !Array.isArray(args)) return name
  const first = args.find((a): a is string => typeof a === "string" && (!a.startsWith("-") || InlineCode.has(a)))
  if (first === undefined) return name
  return InlineCode.has(first) ? `${name} ${first}` : `${name} ${NodePath.basename(first)}`
}
const InlineCode = new Set(["-e", "--eval", "-p", "--print", "-c"])
