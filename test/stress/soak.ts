/**
 * `node --expose-gc test/stress/soak.ts [--events N] [--per-session M] [--seed S]`: the soak (run by `pnpm test:stress`).
 *
 * Drives the host in this process over real extension processes for N events (default 100 000), in sessions of M
 * events (default 1000): each session starts its extensions anew (the restarts), and one of them acts out random
 * faults (crash, clean exit, hang past its timeout, garbage, a stray line, a double reply), so that extensions die
 * and are skipped all along. Events go out eight at a time, tool_call and tool_result mixed.
 *
 * Checked: the guarantee under churn (every call of the tool the healthy guard denies is denied, whatever the flaky
 * one did), no process of any extension left after a session, and the host's footprint flat: open file descriptors
 * back to their count after the first session, and the heap after a full GC and the RSS not growing between the
 * first fifth of the run and its end beyond small bounds. Prints the figures at every tenth of the run. Exit 0 when
 * every check held, 1 otherwise.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { AuditLog, ExtensionHost } from "@abhed/host"
import * as OrphanReaper from "@abhed/host/OrphanReaper"
import { Defaults, type Config, type ExtensionConfig, extensionConfig } from "@abhed/protocol"
import { Effect, Layer, References } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

const args = process.argv.slice(2)
const flag = (name: string, fallback: number): number => {
  const i = args.indexOf(name)
  if (i === -1) return fallback
  const value = Number(args[i + 1])
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: expected a whole number ≥ 1, got ${args[i + 1]}`)
  return value
}
const totalEvents = flag("--events", 100_000)
const perSession = flag("--per-session", 1000)
let seed = flag("--seed", Date.now() % 1_000_000)
const initialSeed = seed

/** A small seeded generator (mulberry32): `--seed` replays a run. */
const random = (): number => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const fixture = NodePath.join(import.meta.dirname, "..", "fixtures", "soak", "soak-ext.mjs")
const extension = (name: string, role: string, overrides?: Partial<ExtensionConfig>): ExtensionConfig =>
  extensionConfig({
    name,
    command: process.execPath,
    args: [fixture],
    env: { SOAK_ROLE: role },
    startup_timeout_ms: 60_000,
    timeout_ms: 15_000,
    ...overrides
  })
// The flaky ones get a short timeout: a hang costs it once per session, and then it is dead.
const config: Config = {
  policy: Defaults.policy,
  max_rewrite_rounds: Defaults.max_rewrite_rounds,
  builtin_tools: [],
  extensions: [
    extension("guard", "guard"),
    extension("flaky-ignore", "flaky", { timeout_ms: 300, on_failure: "ignore" }),
    extension("flaky-ask", "flaky", { timeout_ms: 300, on_failure: "ask" })
  ]
}

const Faults = ["crash", "exit0", "hang", "garbage", "stray", "twice"] as const
/** About one fault in 400 calls: each flaky extension dies a few times a session on average, early or late. */
const faultFor = (): string => (random() < 1 / 400 ? (Faults[Math.floor(random() * Faults.length)] ?? "") : "")

const openFds = (): number => NodeFs.readdirSync("/proc/self/fd").length
/**
 * Live processes whose parent is this one (extensions are our children; their own children are in their group),
 * less the watcher of orphans, which lives as long as this process (OrphanReaper.ts).
 */
const liveChildren = (): ReadonlyArray<number> =>
  NodeFs.readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = NodeFs.readFileSync(`/proc/${d}/stat`, "utf8")
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
        return Number(fields[1]) === process.pid && fields[0] !== "Z" && Number(d) !== OrphanReaper.reaperPid()
          ? [Number(d)]
          : []
      } catch {
        return []
      }
    })
const gc = (globalThis as { gc?: () => void }).gc
const heapAfterGc = (): number => {
  gc?.()
  gc?.()
  return process.memoryUsage().heapUsed
}
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)

interface Tally {
  events: number
  denied: number
  asked: number
  violations: Array<string>
}

const session = (index: number, events: number, audit: string, tally: Tally) =>
  Effect.gen(function* () {
    const host = yield* ExtensionHost
    const batches = Math.ceil(events / 8)
    for (let b = 0; b < batches; b++) {
      const size = Math.min(8, events - b * 8)
      yield* Effect.forEach(
        Array.from({ length: size }, (_, i) => i),
        (i) => {
          const n = index * perSession + b * 8 + i
          const tool = random() < 0.1 ? "rm" : "bash"
          const callId = `${n}:${faultFor()}`
          if (random() < 0.2) {
            return host
              .toolResult({ tool, args: { command: "ls" }, content: `out ${n}`, is_error: false, call_id: callId })
              .pipe(Effect.asVoid)
          }
          return host.toolCall({ tool, args: { command: `${tool} ${n}` }, call_id: callId }).pipe(
            Effect.map((outcome) => {
              if (outcome.decision === "deny") tally.denied++
              if (outcome.decision === "ask") tally.asked++
              if (tool === "rm" && outcome.decision !== "deny") {
                tally.violations.push(`session ${index}, call ${callId}: rm was ${outcome.decision}, not deny`)
              }
            })
          )
        },
        { concurrency: "unbounded", discard: true }
      )
      tally.events += size
    }
  }).pipe(
    Effect.provide(
      ExtensionHost.layer(config, { sessionId: `soak-${index}`, baseDir: import.meta.dirname }).pipe(
        Layer.provideMerge(AuditLog.layerJsonl(audit))
      )
    )
  )

interface Sample {
  readonly events: number
  readonly seconds: number
  readonly rss: number
  readonly heap: number
  readonly fds: number
}

const main = Effect.gen(function* () {
  if (gc === undefined) console.log("soak: no --expose-gc: heap figures are without a forced GC (less exact)")
  const folder = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-soak-"))
  const audit = NodePath.join(folder, "audit.jsonl")
  const tally: Tally = { events: 0, denied: 0, asked: 0, violations: [] }
  const sessions = Math.ceil(totalEvents / perSession)
  const started = Date.now()
  const samples: Array<Sample> = []
  const sample = () => {
    const s = {
      events: tally.events,
      seconds: (Date.now() - started) / 1000,
      rss: process.memoryUsage().rss,
      heap: heapAfterGc(),
      fds: openFds()
    }
    samples.push(s)
    console.log(
      `${String(s.events).padStart(7)} events  ${s.seconds.toFixed(0).padStart(5)} s  rss ${mb(s.rss).padStart(6)} MB  ` +
        `heap ${mb(s.heap).padStart(6)} MB  fds ${s.fds}`
    )
  }
  console.log(`soak: ${totalEvents} events in ${sessions} sessions of ${perSession}, seed ${initialSeed}`)
  let fdsAfterFirst = 0
  const leftovers: Array<string> = []
  for (let i = 0; i < sessions; i++) {
    yield* session(i, Math.min(perSession, totalEvents - i * perSession), audit, tally)
    const children = liveChildren()
    if (children.length > 0) leftovers.push(`session ${i}: processes ${children.join(", ")} left running`)
    // The audit grows on disk, not in this process: start it afresh so the soak does not fill the disk.
    NodeFs.rmSync(audit, { force: true })
    if (i === 0) fdsAfterFirst = openFds()
    if (i === 0 || Math.floor(((i + 1) * 10) / sessions) > Math.floor((i * 10) / sessions)) sample()
  }
  NodeFs.rmSync(folder, { recursive: true, force: true })
  const seconds = (Date.now() - started) / 1000
  const early = samples[Math.min(samples.length - 1, 2)] ?? samples[0]
  const last = samples[samples.length - 1]
  const problems: Array<string> = [...tally.violations.slice(0, 10), ...leftovers.slice(0, 10)]
  if (early !== undefined && last !== undefined) {
    if (last.fds > fdsAfterFirst + 2)
      problems.push(`open fds grew: ${fdsAfterFirst} after the first session, ${last.fds} at the end`)
    const heapGrowth = last.heap - early.heap
    if (heapGrowth > 16 * 1024 * 1024)
      problems.push(`heap after GC grew ${mb(heapGrowth)} MB from ${early.events} events to the end`)
    const rssGrowth = last.rss - early.rss
    if (rssGrowth > 96 * 1024 * 1024)
      problems.push(`RSS grew ${mb(rssGrowth)} MB from ${early.events} events to the end`)
  }
  console.log(
    `soak: ${tally.events} events in ${seconds.toFixed(0)} s (${(tally.events / seconds).toFixed(0)}/s), ` +
      `${tally.denied} denied, ${tally.asked} asked, seed ${initialSeed}`
  )
  if (problems.length === 0) {
    console.log("soak: held (the guard's denials, no process left, fds and memory flat)")
    return 0
  }
  for (const p of problems) console.log(`soak: FAILED: ${p}`)
  return 1
}).pipe(
  Effect.provide(NodeServices.layer),
  // Deaths are the point here: keep the output to the figures.
  Effect.provideService(References.MinimumLogLevel, "Error")
)

Effect.runPromise(main).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    console.error(error)
    process.exitCode = 2
  }
)
