import { assert, beforeAll, describe, it } from "@effect/vitest"
import type { EventName } from "@abhed/protocol"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Patient, within } from "../support/extension-helpers.ts"
import {
  compareWithModel,
  endHelper,
  faultConfig,
  hostConfig,
  type Plan,
  runSession,
  standardSteps
} from "../support/fault-cell.ts"
import {
  type Fault,
  Faults,
  healthyReplies,
  type ModelExtension,
  needsShortTimeout,
  type OnFailure,
  type ReplyIds,
  Sequence
} from "../support/fault-model.ts"

/**
 * The fault matrix (issue 25): every misbehaviour of a real extension process × every event it can strike at ×
 * `on_failure` × `reply_ids`. Each cell is one host over one ext-fault.sh process, a whole session (start-up, every
 * event the agent calls, close), checked against the reference model (test/support/fault-model.ts): the outcomes equal the
 * model's, the session ends in bounded time, the audit names the death by its cause and holds no content, and no
 * process is left.
 *
 * In `pnpm test` the cells are pairwise: every misbehaviour × every event, with the six on_failure × reply_ids
 * combinations rotated so each misbehaviour and each event meets all six. `ABHED_FULL=1` (set by `pnpm test:stress`)
 * runs the full product. The cells are independent and run concurrently (one host each); the `it`s read the results.
 */

const full = process.env["ABHED_FULL"] === "1"

const combos: ReadonlyArray<{ readonly on_failure: OnFailure; readonly reply_ids: ReplyIds }> = [
  { on_failure: "ignore", reply_ids: "optional" },
  { on_failure: "ask", reply_ids: "required" },
  { on_failure: "deny", reply_ids: "optional" },
  { on_failure: "ignore", reply_ids: "required" },
  { on_failure: "ask", reply_ids: "optional" },
  { on_failure: "deny", reply_ids: "required" }
]

interface Cell {
  readonly fault: Fault
  readonly at: EventName
  readonly on_failure: OnFailure
  readonly reply_ids: ReplyIds
}

const cellName = (c: Cell): string => `${c.fault} at ${c.at}, on_failure ${c.on_failure}, reply_ids ${c.reply_ids}`

/** `ABHED_MATRIX_ONLY=regex`: only the cells whose name matches (to re-run a few while working on the host). */
const only = process.env["ABHED_MATRIX_ONLY"]

const allCells: ReadonlyArray<Cell> = Faults.flatMap((fault, i) =>
  Sequence.flatMap((at, j) =>
    full
      ? combos.map((c) => ({ fault, at, ...c }))
      : [{ fault, at, ...(combos[(i + j) % combos.length] ?? { on_failure: "ignore", reply_ids: "optional" }) }]
  )
)

const cells = only === undefined ? allCells : allCells.filter((c) => new RegExp(only).test(cellName(c)))

/**
 * The timeout of the faults that are only waited out (patient ones for the others). It is every exchange's timeout
 * in those cells, the healthy ones before the fault included, so it is short only next to `Patient`: a loaded
 * machine must not time out a healthy reply.
 */
const ShortMs = 4000
const GraceMs = 300

const runCell = (cell: Cell) =>
  Effect.gen(function* () {
    const helperFile =
      cell.fault === "setsid-helper"
        ? NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-matrix-")), "helper.pid")
        : undefined
    const plan: Plan = {
      name: "f",
      fault: cell.fault,
      at: cell.at,
      slowSeconds: (8 * ShortMs) / 1000,
      ...(helperFile === undefined ? {} : { helperFile })
    }
    const short = needsShortTimeout(cell.fault)
    const config = hostConfig([
      faultConfig(plan, {
        on_failure: cell.on_failure,
        reply_ids: cell.reply_ids,
        grace_ms: GraceMs,
        timeout_ms: short ? ShortMs : Patient.timeout_ms,
        startup_timeout_ms: short && cell.at === "session_start" ? ShortMs : Patient.startup_timeout_ms
      })
    ])
    const model: ModelExtension = {
      name: "f",
      on_failure: cell.on_failure,
      reply_ids: cell.reply_ids,
      events: [],
      replies: healthyReplies("f"),
      fault: cell.fault,
      at: cell.at
    }
    const steps = standardSteps("f")
    // Expected: the session itself (well under a second), plus what the fault makes the host wait out: a timeout,
    // and at close the two graces (an extension that ignores its stdin's end and SIGTERM).
    const expected = 1000 + (short ? 2 * ShortMs + 2 * GraceMs : GraceMs)
    const run = yield* runSession(config, steps, within(expected) + 2000).pipe(
      Effect.ensuring(Effect.sync(() => endHelper(helperFile)))
    )
    return compareWithModel([model], steps, run, { maxMillis: within(expected) })
  })

const results = new Map<string, ReadonlyArray<string>>()

beforeAll(
  async () => {
    const pool = (some: ReadonlyArray<Cell>, concurrency: number) =>
      Effect.forEach(some, (cell) => Effect.map(runCell(cell), (problems) => [cellName(cell), problems] as const), {
        concurrency
      })
    // The cells that wait out a timeout spend their time idle: a pool of their own, wider than the CPU-bound one.
    const [waiting, busy] = await Effect.runPromise(
      Effect.all(
        [
          pool(
            cells.filter((c) => needsShortTimeout(c.fault)),
            48
          ),
          pool(
            cells.filter((c) => !needsShortTimeout(c.fault)),
            full ? 6 : 8
          )
        ],
        { concurrency: 2 }
      )
    )
    for (const [name, problems] of [...waiting, ...busy]) results.set(name, problems)
  },
  full ? 3_600_000 : 300_000
)

const check = (cell: Cell) => () => {
  const problems = results.get(cellName(cell))
  assert.isDefined(problems, "the cell did not run")
  if (problems !== undefined && problems.length > 0) assert.fail(`${cellName(cell)}:\n${problems.join("\n")}`)
}

describe(`fault matrix (${cells.length} cells${full ? ", full product" : ", pairwise"})`, () => {
  for (const cell of cells) it(cellName(cell), check(cell))
})
