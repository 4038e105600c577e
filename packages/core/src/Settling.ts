import { jsonEquals } from "@abhed/protocol"
import { Effect, type Reducer } from "effect"
import type { Named } from "./Named.ts"
import { NameOrder, sortByName } from "./Named.ts"

/**
 * Settling rewrites (docs/design.md#combination). A rewrite (`tool_call` args, `tool_result` content) is a proposal.
 * Each round fans the current payload out to every subscriber; when nobody proposes anything different, every
 * subscriber has seen exactly what will run. Otherwise the lowest-named proposer's value is adopted and another round
 * starts. Picking by name (not by arrival) keeps the outcome independent of load order and timing; requiring a
 * quiet round means no extension judged a payload other than the one that runs.
 */

export type SettleStep<P> =
  | { readonly _tag: "Settled" }
  | { readonly _tag: "Next"; readonly payload: P; readonly proposer: string }

/** Proposals equal to `current` (as JSON, key order irrelevant) or undefined are not proposals. */
export const settleStep = <P>(current: P, proposals: ReadonlyArray<Named<P | undefined>>): SettleStep<P> => {
  for (const { name, value } of sortByName(proposals)) {
    if (value !== undefined && !jsonEquals(value, current)) return { _tag: "Next", payload: value, proposer: name }
  }
  return { _tag: "Settled" }
}

/** Names of the subscribers whose proposal differs from `current`, sorted. */
export const proposersOf = <P>(current: P, proposals: ReadonlyArray<Named<P | undefined>>): ReadonlyArray<string> =>
  proposals
    .filter((p) => p.value !== undefined && !jsonEquals(p.value, current))
    .map((p) => p.name)
    .sort(NameOrder)

/** One subscriber's reply in one round: its proposal (undefined = none) and its value (e.g. its verdict). */
export interface RoundReply<P, V> {
  readonly name: string
  readonly proposal: P | undefined
  readonly value: V
}

export type SettleOutcome<P, V> =
  /** A round with no differing proposal: `payload` is what every subscriber saw in that round. */
  | {
      readonly _tag: "Settled"
      readonly payload: P
      readonly rounds: number
      readonly value: V
      /** Whose proposal was adopted after each round but the last, in round order (empty: nobody rewrote). */
      readonly adopted: ReadonlyArray<string>
    }
  /** `stop(value)` became true (a deny): ended at once. `payload` is the one fanned out in the last round. */
  | {
      readonly _tag: "Stopped"
      readonly payload: P
      readonly rounds: number
      readonly value: V
      readonly adopted: ReadonlyArray<string>
    }
  /**
   * Still proposing after `maxRounds` rounds: the caller must fail closed. `payload` is the one fanned out in the
   * last round (not the unadopted proposal); `proposers` are that round's proposers, sorted; `fighters` everyone
   * who proposed a different payload in any round, sorted (with two fighters the last round names only one).
   */
  | {
      readonly _tag: "Unsettled"
      readonly payload: P
      readonly rounds: number
      readonly value: V
      readonly proposers: ReadonlyArray<string>
      readonly fighters: ReadonlyArray<string>
      readonly adopted: ReadonlyArray<string>
    }

export interface SettleOptions<P, V> {
  readonly initial: P
  /** Accumulates the value over all replies of all rounds; must be commutative for order independence. */
  readonly reducer: Reducer.Reducer<V>
  /** Ends the rounds at once when true, e.g. `(v) => v.level === "deny"`. */
  readonly stop: (value: V) => boolean
  /**
   * Rounds in total; values below 1 count as 1 (a call is always shown to its subscribers at least once), and so
   * does anything that is not a finite number (NaN or Infinity would never end a fight: it must fail closed).
   */
  readonly maxRounds: number
}

/**
 * The settling driver. Round numbers start at 1. The stop check comes after each round, before settling.
 *
 * No generator: this runs on every tool_call and tool_result, and the common case (one round, nobody proposes)
 * is one `round` effect and one synchronous step after it, with nothing allocated for rounds that never happen.
 */
export const settleEffect = <P, V, E, R>(options: SettleRounds<P, V, E, R>): Effect.Effect<SettleOutcome<P, V>, E, R> =>
  Effect.suspend(() => settleNow(options))

/** What the settling driver runs: the options and one round's effect. */
export type SettleRounds<P, V, E, R> = SettleOptions<P, V> & {
  readonly round: (payload: P, round: number) => Effect.Effect<ReadonlyArray<RoundReply<P, V>>, E, R>
}

/**
 * `settleEffect` begun now: its state is made at once, without a suspension of its own, for a caller that makes
 * the effect as it runs (the host's dispatches) and runs it once.
 */
export const settleNow = <P, V, E, R>(options: SettleRounds<P, V, E, R>): Effect.Effect<SettleOutcome<P, V>, E, R> => {
  const { reducer, stop } = options
  const maxRounds = Number.isFinite(options.maxRounds) ? Math.max(1, Math.floor(options.maxRounds)) : 1
  let fighters: Set<string> | undefined
  const adopted: Array<string> = []
  const values: Array<V> = []
  const next = (payload: P, previous: V, round: number): Effect.Effect<SettleOutcome<P, V>, E, R> =>
    Effect.flatMap(options.round(payload, round), (replies) => {
      values.length = 0
      let proposing = false
      for (const r of replies) {
        values.push(r.value)
        if (r.proposal !== undefined) proposing = true
      }
      const value = reducer.combine(previous, reducer.combineAll(values))
      if (stop(value)) return Effect.succeed({ _tag: "Stopped", payload, rounds: round, value, adopted })
      // Nobody proposed anything: settled, without comparing (the common case).
      if (!proposing) return Effect.succeed({ _tag: "Settled", payload, rounds: round, value, adopted })
      const proposals = replies.map((r) => ({ name: r.name, value: r.proposal }))
      const step = settleStep(payload, proposals)
      if (step._tag === "Settled") return Effect.succeed({ _tag: "Settled", payload, rounds: round, value, adopted })
      const proposers = proposersOf(payload, proposals)
      fighters ??= new Set()
      for (const name of proposers) fighters.add(name)
      if (round >= maxRounds) {
        return Effect.succeed({
          _tag: "Unsettled",
          payload,
          rounds: round,
          value,
          proposers,
          fighters: [...fighters].sort(NameOrder),
          adopted
        })
      }
      adopted.push(step.proposer)
      return next(step.payload, value, round + 1)
    })
  return next(options.initial, reducer.initialValue, 1)
}

/** The pure version: the same driver run synchronously, so tests of `settle` test the code the host runs. */
export const settle = <P, V>(
  options: SettleOptions<P, V> & {
    readonly round: (payload: P, round: number) => ReadonlyArray<RoundReply<P, V>>
  }
): SettleOutcome<P, V> =>
  Effect.runSync(
    settleEffect({ ...options, round: (payload, round) => Effect.sync(() => options.round(payload, round)) })
  )

/** The reason a `tool_call` is denied when its args did not settle (docs/design.md#combination, fail closed). */
export const unsettledReason = (proposers: ReadonlyArray<string>): string =>
  `rewrites did not settle: ${proposers.join(", ")}`
