import * as NodeFs from "node:fs"
import { createRequire, syncBuiltinESMExports } from "node:module"
import * as NodePath from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll } from "vitest"
import { commandKey, cpuTimes } from "./cpu-usage.ts"

/**
 * Where a test file's CPU goes (`pnpm test:cpu`, vitest.cpu.config.ts): per file, one JSON line in
 * `$ABHED_TEST_CPU_OUT` with the worker's own CPU, the CPU of every process the file started (and theirs, once
 * reaped), its wall time, and how many processes it started, by command. A setup file: it runs before each test
 * file, in that file's worker.
 */

type Spawner = (command: string, ...rest: Array<unknown>) => unknown

/**
 * Started processes by command (`node bin.mjs`, `bash ext-fault.sh`, `python3`, ...), for the current file. On the
 * global object: this file is evaluated again for each test file a worker runs, and the patched functions, made
 * once per worker, must count into the map the current file reads.
 */
const countsKey = Symbol.for("abhed.test.cpuUsage.counts")
const holder = globalThis as typeof globalThis & { [countsKey]?: Map<string, number> }
holder[countsKey] ??= new Map<string, number>()
const counts: Map<string, number> = holder[countsKey]

const patched = Symbol.for("abhed.test.cpuUsage.spawnCounted")
const childProcess = createRequire(import.meta.url)("node:child_process") as Record<string, unknown> & {
  [patched]?: true
}
if (childProcess[patched] !== true) {
  childProcess[patched] = true
  for (const name of ["spawn", "spawnSync", "execFile", "execFileSync"] as const) {
    const original = childProcess[name] as Spawner & { [promisify.custom]?: unknown }
    const counted = function (this: unknown, command: string, ...rest: Array<unknown>) {
      const key = commandKey(String(command), rest[0])
      const now = holder[countsKey]
      now?.set(key, (now.get(key) ?? 0) + 1)
      return original.call(this, command, ...rest)
    }
    // `util.promisify(execFile)` resolves with { stdout, stderr } through this: kept, so that nothing behaves
    // differently under the account (what it starts is not counted).
    if (original[promisify.custom] !== undefined)
      Object.defineProperty(counted, promisify.custom, { value: original[promisify.custom] })
    childProcess[name] = counted
  }
  // The ES module namespace of node:child_process follows the patched CommonJS object.
  syncBuiltinESMExports()
}
let start: { readonly self: number; readonly children: number; readonly childrenSystem: number; readonly wall: number }
let file = "?"

// vitest reads the first parameter as fixtures to inject, and wants a pattern: none here.
// biome-ignore lint/correctness/noEmptyPattern: no fixture is wanted, the suite is the second parameter
beforeAll(({}, suite) => {
  counts.clear()
  const times = cpuTimes() ?? { self: 0, children: 0, childrenSystem: 0 }
  start = { ...times, wall: Date.now() }
  file = NodePath.relative(process.cwd(), suite.file.filepath)
})

afterAll(() => {
  const out = process.env["ABHED_TEST_CPU_OUT"]
  const now = cpuTimes()
  if (out === undefined || now === undefined) return
  const line = {
    file,
    self: now.self - start.self,
    children: now.children - start.children,
    childrenSystem: now.childrenSystem - start.childrenSystem,
    wall: (Date.now() - start.wall) / 1000,
    spawns: Object.fromEntries(counts)
  }
  NodeFs.appendFileSync(out, `${JSON.stringify(line)}\n`)
})
