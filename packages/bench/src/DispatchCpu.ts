import { readFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { extensionsDir, noop, noopIds } from "./ExtensionFiles.ts"
import { closeAll, rawStartup } from "./RawHost.ts"
import { withSides } from "./Sides.ts"
import { percentile } from "./Stats.ts"
import { hostToolCall, rawToolCall, sessionId, toolArgs } from "./scenarios/ToolCall.ts"

/**
 * Scenario 1 seen from the bench process: `node packages/bench/src/DispatchCpu.ts N [--ids]` runs sequential
 * tool_call dispatches to N no-op processes (`--ids`: id-echoing no-ops, `reply_ids: "required"`), host and raw in
 * alternating blocks of 500 (11 blocks, the first thrown away), and prints per side the median of the blocks' p50
 * wall time, the CPU time of this process per dispatch (`process.cpuUsage`: all its threads, so the garbage
 * collector's helpers too), and its context switches per dispatch. Not a budget row; for comparing host changes.
 *
 * `--fakes`: the host alone, over N in-process fakes that answer `{}` (no process, no pipe, no raw side): every
 * microsecond of CPU is the host's own. 40 blocks of 500 after a warm-up block; prints the median and the quartiles
 * of the blocks' CPU per dispatch. `--fakes --against DIR` compares this tree (B) with the checkout at DIR (A). The
 * tree this script runs from reads a few percent low over one fake (a copy of it as A: B/A 0.96–0.985): run it from
 * each tree in turn (copied into the other checkout) and take the geometric mean.
 *
 * `--against DIR` without `--fakes`: scenario 1's A/B in one process. The checkout at DIR's host (A) and this tree's
 * (B), each over its own N no-op processes, and the raw client, in rotating blocks (40 of 500 after a warm-up, or
 * `--blocks`); prints each side's p50 and CPU per dispatch, and the B/A ratios per round of blocks.
 */
const count = Number(process.argv[2] ?? 8)
if (!Number.isInteger(count) || count < 1)
  throw new Error(`DispatchCpu: expected a number of extensions, got ${process.argv[2]}`)
const command = process.argv.includes("--ids") ? noopIds : noop
const perBlock = 500
const median = (xs: ReadonlyArray<number>) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50
  )
const switches = (): [number, number] => {
  const status = readFileSync("/proc/self/status", "utf8")
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? Number.NaN)
  return [field("voluntary_ctxt_switches"), field("nonvoluntary_ctxt_switches")]
}
interface Readings {
  readonly p50: Array<number>
  readonly cpu: Array<number>
  readonly voluntary: Array<number>
  readonly involuntary: Array<number>
}
const empty = (): Readings => ({ p50: [], cpu: [], voluntary: [], involuntary: [] })

/** A checkout's host and its own copy of effect (two trees' effects are separate instances and must not mix). */
interface Tree {
  readonly label: string
  readonly host: typeof import("@abhed/host")
  readonly protocol: typeof import("@abhed/protocol")
  readonly effect: typeof import("effect")
}
const treeAt = async (label: string, root: string): Promise<Tree> => ({
  label,
  host: (await import(pathToFileURL(join(root, "packages/host/src/index.ts")).href)) as typeof import("@abhed/host"),
  protocol: (await import(
    pathToFileURL(join(root, "packages/protocol/src/index.ts")).href
  )) as typeof import("@abhed/protocol"),
  effect: (await import(
    pathToFileURL(join(root, "packages/host/node_modules/effect/dist/index.js")).href
  )) as typeof import("effect")
})
const roots = (): ReadonlyArray<readonly [string, string]> => {
  const at = process.argv.indexOf("--against")
  const against = at < 0 ? undefined : process.argv[at + 1]
  return [...(against === undefined ? [] : [["A", against] as const]), ["B", join(import.meta.dirname, "../../..")]]
}
const given = process.argv.indexOf("--blocks")
const blocks = given < 0 ? 40 : Number(process.argv[given + 1])
const quartiles = (xs: ReadonlyArray<number>, digits: number) => {
  const q = (p: number) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      p
    ).toFixed(digits)
  return `median ${q(50)} (quartiles ${q(25)} – ${q(75)})`
}

/** One block of `perBlock` sequential tool_call dispatches over `count` fakes, as a thunk returning its promise. */
const fakeHost = async ({
  effect,
  host
}: Tree): Promise<{ readonly block: () => Promise<void>; readonly close: () => Promise<void> }> => {
  const { Effect, Exit, Scope } = effect
  const scope = Effect.runSync(Scope.make())
  const made = await Effect.runPromise(
    Effect.gen(function* () {
      const extensions = yield* Effect.forEach(Array.from({ length: count }), (_, i) =>
        host.FakeExtension.make(`ext-${String(i).padStart(2, "0")}`, () => Effect.succeed({}))
      )
      return yield* host.ExtensionHost.make(extensions, { sessionId: "bench" })
    }).pipe(Effect.provide(host.AuditLog.layerNone), Scope.provide(scope))
  )
  // One block is one effect (no promise per dispatch): the fakes' replies come back on the fiber scheduler alone.
  const call = made.toolCall({ tool: "bash", args: { command: "git status --short" } })
  const block = Effect.gen(function* () {
    for (let i = 0; i < perBlock; i++) yield* call
  })
  return { block: () => Effect.runPromise(block), close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/**
 * The host's own CPU per dispatch over in-process fakes (`--fakes`), and with `--against DIR` the same for the
 * checkout at DIR, loaded into this process: blocks of the two alternate (A B B A ...), so both see the same
 * machine, and each pair's ratio cancels what the machine did meanwhile.
 */
const fakes = async (): Promise<void> => {
  const trees = await Promise.all(roots().map(([label, root]) => treeAt(label, root)))
  const hosts = await Promise.all(trees.map(fakeHost))
  const cpu: Array<Array<number>> = hosts.map(() => [])
  for (let b = 0; b <= blocks; b++) {
    const order = hosts.map((_, i) => i)
    if (b % 2 === 1) order.reverse()
    for (const i of order) {
      const cpu0 = process.cpuUsage()
      await hosts[i]?.block()
      const used = process.cpuUsage(cpu0)
      if (b > 0) cpu[i]?.push((used.user + used.system) / perBlock)
    }
  }
  for (const h of hosts) await h.close()
  const q = (xs: ReadonlyArray<number>, p: number) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      p
    )
  const lines = trees.map(
    (t, i) =>
      `${t.label}: median ${q(cpu[i] ?? [], 50).toFixed(2)} µs (quartiles ${q(cpu[i] ?? [], 25).toFixed(2)} – ${q(cpu[i] ?? [], 75).toFixed(2)})`
  )
  const [a = [], b = []] = cpu
  const ratios = a.map((x, i) => (b[i] ?? Number.NaN) / x)
  const ratio =
    ratios.length > 0
      ? `\n  B/A per pair of blocks: median ${q(ratios, 50).toFixed(3)} (quartiles ${q(ratios, 25).toFixed(3)} – ${q(ratios, 75).toFixed(3)})`
      : ""
  process.stdout.write(`${count} fakes, host CPU per dispatch\n  ${lines.join("\n  ")}${ratio}\n`)
}

/** A tree's host over `count` no-op processes (as HostSide's, from that tree's own modules), and its dispatch. */
const processHost = async ({ effect, host, protocol }: Tree) => {
  const { Effect, Layer, Logger, ManagedRuntime, References } = effect
  const config = {
    extensions: Array.from({ length: count }, (_, i) =>
      protocol.extensionConfig({
        name: `ext-${String(i).padStart(2, "0")}`,
        command: command.command,
        args: command.args
      })
    ),
    policy: protocol.Defaults.policy,
    max_rewrite_rounds: protocol.Defaults.max_rewrite_rounds,
    builtin_tools: protocol.Defaults.builtin_tools
  }
  const quiet = Layer.mergeAll(
    Layer.succeed(Logger.LogToStderr, true),
    Layer.succeed(References.MinimumLogLevel, "Warn")
  )
  const layer = host.ExtensionHost.layer(config, { sessionId, baseDir: extensionsDir }).pipe(
    Layer.provide(host.AuditLog.layerNone),
    Layer.provideMerge(quiet)
  )
  const runtime = ManagedRuntime.make(layer)
  const started = await runtime.runPromise(Effect.service(host.ExtensionHost))
  return {
    call: () => runtime.runPromise(started.toolCall({ tool: "bash", args: toolArgs })),
    dispose: () => runtime.dispose()
  }
}

/** Scenario 1 with two trees' hosts and the raw client, blocks rotating (see the top of this file). */
const processAB = async (): Promise<void> => {
  const trees = await Promise.all(roots().map(([label, root]) => treeAt(label, root)))
  const hosts: Array<{ readonly call: () => Promise<unknown>; readonly dispose: () => Promise<void> }> = []
  const raw = await rawStartup(count, command.command, command.args, sessionId)
  try {
    for (const tree of trees) hosts.push(await processHost(tree))
    const sides = [...hosts.map((h) => h.call), rawToolCall(raw)]
    const labels = [...trees.map((t) => `host ${t.label}`), "raw"]
    const readings = sides.map(empty)
    for (let b = 0; b <= blocks; b++) {
      for (let k = 0; k < sides.length; k++) {
        const i = (b + k) % sides.length
        const side = sides[i]
        if (side === undefined) continue
        const times: Array<number> = []
        const cpu0 = process.cpuUsage()
        for (let n = 0; n < perBlock; n++) {
          const t0 = process.hrtime.bigint()
          await side()
          times.push(Number(process.hrtime.bigint() - t0) / 1000)
        }
        const cpu = process.cpuUsage(cpu0)
        if (b === 0) continue // warm-up
        readings[i]?.p50.push(median(times))
        readings[i]?.cpu.push((cpu.user + cpu.system) / perBlock)
      }
    }
    const lines = labels.map(
      (label, i) =>
        `${label}: p50 ${quartiles(readings[i]?.p50 ?? [], 1)} µs, CPU ${quartiles(readings[i]?.cpu ?? [], 1)} µs`
    )
    const [a, b] = readings
    const ratio = (key: "p50" | "cpu") =>
      a === undefined || b === undefined || trees.length < 2 ? [] : a[key].map((x, i) => (b[key][i] ?? Number.NaN) / x)
    const ab =
      trees.length < 2
        ? ""
        : `\n  B/A per round of blocks: p50 ${quartiles(ratio("p50"), 3)}, CPU ${quartiles(ratio("cpu"), 3)}`
    process.stdout.write(`${count} no-op ext, per dispatch\n  ${lines.join("\n  ")}${ab}\n`)
  } finally {
    for (const h of hosts) await h.dispose()
    await closeAll(raw)
  }
}

if (process.argv.includes("--fakes")) await fakes()
else if (process.argv.includes("--against")) await processAB()
else
  await withSides({ count, command }, [{ count, command }], async (host, [raw = []]) => {
    const sides = { host: hostToolCall(host), raw: rawToolCall(raw) }
    const readings = { host: empty(), raw: empty() }
    for (let b = 0; b <= 10; b++) {
      for (const key of b % 2 === 0 ? (["host", "raw"] as const) : (["raw", "host"] as const)) {
        const times: Array<number> = []
        const [v0, i0] = switches()
        const cpu0 = process.cpuUsage()
        for (let i = 0; i < perBlock; i++) {
          const t0 = process.hrtime.bigint()
          await sides[key]()
          times.push(Number(process.hrtime.bigint() - t0) / 1000)
        }
        const cpu = process.cpuUsage(cpu0)
        const [v1, i1] = switches()
        if (b === 0) continue // warm-up
        const r = readings[key]
        r.p50.push(median(times))
        r.cpu.push((cpu.user + cpu.system) / perBlock)
        r.voluntary.push((v1 - v0) / perBlock)
        r.involuntary.push((i1 - i0) / perBlock)
      }
    }
    const line = (key: "host" | "raw") => {
      const r = readings[key]
      return `${key}: p50 ${median(r.p50).toFixed(1)} µs, CPU ${median(r.cpu).toFixed(1)} µs, switches ${median(r.voluntary).toFixed(2)} + ${median(r.involuntary).toFixed(2)} involuntary`
    }
    process.stdout.write(
      `${count} ${command === noopIds ? "id-echoing " : ""}no-op ext, per dispatch\n  ${line("host")}\n  ${line("raw")}\n  p50 ratio ${(median(readings.host.p50) / median(readings.raw.p50)).toFixed(3)}\n`
    )
  })
