import {
  type EventName,
  type ExtensionConfig,
  extensionConfig,
  Framing,
  type RequestOf,
  type WithId
} from "@abhed/protocol"
import type { EncodedRequest, Extension, ExtensionStatus } from "@abhed/host/Extension"
import type { ExtensionError } from "@abhed/host/ExtensionError"
import * as OrphanReaper from "@abhed/host/OrphanReaper"
import * as ProcessExtension from "@abhed/host/ProcessExtension"
import { assert } from "@effect/vitest"
import { Duration, Effect, Exit, Schedule, Scope } from "effect"
import type { ChildProcessSpawner } from "effect/process"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/** Helpers for the real-process extension tests. */

export const fixturesDir = NodePath.join(import.meta.dirname, "..", "fixtures")
export const fixture = (file: string) => NodePath.join(fixturesDir, file)

/*
 * Margins for real processes on a busy machine (issue 10). Two rules keep these tests green when both cores are
 * taken by something else:
 *
 * - A timeout a test is NOT about must never fire: it gets `Patient` (seconds, not hundreds of milliseconds; a
 *   python3 start alone takes 0.3–0.9 s on the reference machine, several seconds with the machine loaded). It
 *   costs nothing, since nothing waits for it unless something is broken.
 * - A timeout a test IS about is short, and the fixture then never replies (ext-hang) or replies only long after
 *   it (ext-slow.py), so a late scheduler cannot turn one outcome into the other.
 *
 * Time is asserted only where it is the point, against `within(expected)`: several times the expected value plus
 * the machine's measured slowness.
 */

/** Timeouts for tests that are not about timeouts. */
export const Patient = { startup_timeout_ms: 30_000, timeout_ms: 15_000 } as const

/** python3 without site packages or PYTHON* variables: starts in a fraction of the time. Fixtures use stdlib only. */
export const python = { command: "python3", args: ["-S", "-E"] } as const

const measureStart = (): number => {
  const started = Date.now()
  const run = NodeChildProcess.spawnSync(python.command, [...python.args, "-c", "pass"], { stdio: "ignore" })
  return run.error === undefined ? Date.now() - started : 1000
}

/**
 * How long an interpreter start takes on this machine (ms), measured once when this module loads: the unit of the
 * machine's slowness. About 30–100 ms idle, several times that with the machine loaded. Floored at 250 ms: one sample
 * taken in a quiet moment must not leave a loaded minute later without its margin (the bound was this wide when the
 * tests still started python3 through pyenv's shim, and a sanity bound loses nothing by it).
 */
export const interpreterStartMillis: number = Math.max(250, measureStart())

/**
 * An upper bound on the elapsed time of something expected to take `expectedMillis`, for tests where time is the
 * point: four times over, plus forty interpreter starts (≥ 10 s) for the scheduler on a loaded machine. A sanity
 * bound, never a synchronization.
 */
export const within = (expectedMillis: number): number => 4 * expectedMillis + 40 * interpreterStartMillis

/** The command that runs a fixture file, by its extension. */
export const fixtureCommand = (file: string): { readonly command: string; readonly args: ReadonlyArray<string> } =>
  file.endsWith(".sh")
    ? { command: "bash", args: [] }
    : file.endsWith(".py")
      ? { command: python.command, args: python.args }
      : { command: "node", args: [] }

/**
 * A config for a fixture: `Patient` timeouts (a test about a timeout sets its own, short one) and a short grace
 * (a well-behaved fixture exits as soon as its stdin closes; the grace is only waited out by those that do not).
 */
export const fixtureConfig = (file: string, overrides?: Partial<ExtensionConfig>): ExtensionConfig => {
  const { args, command } = fixtureCommand(file)
  return extensionConfig({
    name: file.replace(/\.\w+$/, ""),
    command,
    args: [...args, fixture(file)],
    ...Patient,
    grace_ms: 300,
    ...overrides
  })
}

export const encode = <E extends EventName>(
  value: WithId<RequestOf<E>> & { readonly event: E }
): EncodedRequest<E> => ({
  event: value.event,
  value,
  bytes: Framing.encodeLine(value)
})

export const toolCall = (callId: string) =>
  encode<"tool_call">({
    event: "tool_call",
    session_id: "s-test",
    id: callId,
    call_id: callId,
    tool: "bash",
    args: { command: "ls" }
  })

interface ProcStat {
  readonly pid: number
  readonly state: string
  readonly pgrp: number
}

const procStat = (pid: string): ProcStat | undefined => {
  try {
    const text = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so parse after the last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
    return { pid: Number(pid), state: fields[0] ?? "?", pgrp: Number(fields[2]) }
  } catch {
    return undefined // gone (or not Linux)
  }
}

/**
 * The live (non-zombie) processes of group `pgid`. Zombies are left out: a grandchild whose parent died is
 * reparented to PID 1, and reaping it is PID 1's job (this container's PID 1 does so only every second or so).
 */
export const liveGroupMembers = (pgid: number): ReadonlyArray<number> =>
  NodeFs.readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(procStat)
    .filter((s): s is ProcStat => s !== undefined && s.pgrp === pgid && s.state !== "Z")
    .map((s) => s.pid)

/** Is `pid` a live (non-zombie) process? */
export const isLive = (pid: number): boolean => {
  const stat = procStat(String(pid))
  return stat !== undefined && stat.state !== "Z"
}

/** Does `pid` exist at all, zombie included? (Our own children must be reaped, not merely dead.) */
export const exists = (pid: number): boolean => procStat(String(pid)) !== undefined

export interface Closed<A> {
  readonly result: A
  readonly pid: number | undefined
  /** The status just before the scope closed. */
  readonly status: ExtensionStatus
  readonly closeMillis: number
}

/**
 * Start the extension in its own scope, run `body`, close the scope, and check that nothing of its process group
 * is left.
 */
export const withExtension = <A, E, R>(
  config: ExtensionConfig,
  body: (ext: Extension) => Effect.Effect<A, E, R>,
  options?: { readonly maxLineBytes?: number; readonly baseDir?: string }
): Effect.Effect<Closed<A>, E, R | ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const ext = yield* ProcessExtension.make(config, {
      sessionId: "s-test",
      baseDir: options?.baseDir ?? fixturesDir,
      ...(options?.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes })
    }).pipe(Scope.provide(scope))
    const result = yield* body(ext).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
    const status = yield* ext.status
    const started = Date.now()
    yield* Scope.close(scope, Exit.void)
    const closeMillis = Date.now() - started
    if (status.pid !== undefined) {
      assert.deepStrictEqual(liveGroupMembers(status.pid), [], `processes of group ${status.pid} outlived the scope`)
      assert.isFalse(exists(status.pid), `process ${status.pid} outlived the scope (or was not reaped)`)
      // Seen gone, so struck off: the watcher of orphans must never signal a group id that may be reused.
      assert.isFalse(
        OrphanReaper.listed().has(status.pid),
        `group ${status.pid} still listed with the watcher of orphans`
      )
    }
    return { result, pid: status.pid, status, closeMillis }
  })

/** Send, timing it; the failure is returned as a value. Never a defect: a defect fails the test. */
export const timedSend = <E extends EventName>(ext: Extension, request: EncodedRequest<E>) =>
  Effect.gen(function* () {
    const started = Date.now()
    const result = yield* Effect.result(ext.send(request))
    return { result, millis: Date.now() - started }
  })

export const expectFailure = <A>(
  result:
    | { readonly _tag: "Success"; readonly success: A }
    | { readonly _tag: "Failure"; readonly failure: ExtensionError }
): ExtensionError => {
  if (result._tag === "Success") assert.fail(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}

/** Wait (bounded) until the extension reports dead: for deaths that no request observes. */
export const awaitDeath = (ext: Extension) =>
  ext.status.pipe(
    Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (s) => s.state._tag === "dead" }),
    Effect.timeout(Duration.millis(within(1000)))
  )
