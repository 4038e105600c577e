import { type AcceptedTool, sortByName } from "@abhed/core"
import type { ExtensionConfig } from "@abhed/protocol"
import { Clock, Effect, Exit, Scope, Semaphore } from "effect"
import { single, type DispatchContext } from "./dispatch/Dispatch.ts"
import * as ListTools from "./dispatch/ListTools.ts"
import { makeRoundContext } from "./dispatch/Round.ts"
import type { Extension } from "./Extension.ts"
import {
  absolute,
  fingerprintOf,
  planReload,
  printOf,
  type ReloadInput,
  ReloadRejected,
  type ReloadReport,
  reportOf,
  type Settings,
  settingsOf
} from "./ReloadPlan.ts"

export { type ReloadInput, ReloadRejected, type ReloadReport } from "./ReloadPlan.ts"

/**
 * A host's extension set, and a new config taken within the session (docs/embedding.md#reload). Every call the
 * agent makes runs over the set current when it began (its dispatch context, its extensions, its policy), counted
 * in that set while it runs; a reload builds the next set beside it, swaps it in, waits until no call runs over the
 * old one, then ends what the new set no longer has. An extension whose definition and scripts (the bytes of the
 * files its command line names, as in Fingerprint.ts) are unchanged is the same running extension in the new set;
 * one that changed is started again; one removed gets `session_end` and is closed; one added is started and gets
 * `session_start`. The policy, `builtin_tools` and `max_rewrite_rounds` switch with the set. What changes is
 * planned first (ReloadPlan.ts); this file runs the swap.
 */

/** How a host starts the extensions of a new config, and what tells a changed one. */
export interface Reloading {
  /** Starts one extension; the scope it gets closes when the extension leaves the set (or with the host). */
  readonly start: (config: ExtensionConfig) => Effect.Effect<Extension, never, Scope.Scope>
  /** What a relative `cwd` resolves against (the config file's folder). */
  readonly baseDir: string
  /** Folders whose files, when an extension's command or arguments name them, count as its scripts. */
  readonly roots: ReadonlyArray<string>
  /** The agent's own tools, added to every config's `builtin_tools`. */
  readonly builtinTools: ReadonlyArray<string>
}

/** One set: what a call runs over. */
export interface ExtensionSet {
  readonly ctx: DispatchContext
  /** In name order. */
  readonly extensions: ReadonlyArray<Extension>
  readonly tools: ReadonlyArray<AcceptedTool>
  /** Per extension name: the digest of its definition (cwd made absolute) and scripts. */
  readonly prints: ReadonlyMap<string, string>
  readonly fingerprint: string
  /** Calls running over this set. */
  running: number
  readonly whenIdle: Array<() => void>
  /** Ends one call's count (`using`'s exit hook, made once per set rather than per call). */
  readonly release: () => undefined
}

/** A set no call runs over yet. */
const makeSet = (fields: Omit<ExtensionSet, "running" | "whenIdle" | "release">): ExtensionSet => {
  const set: ExtensionSet = {
    ...fields,
    running: 0,
    whenIdle: [],
    release: () => {
      if (--set.running === 0) for (const resume of set.whenIdle.splice(0)) resume()
      return undefined
    }
  }
  return set
}

/** A host's sets: the current one, the first context (whose counters every later one shares), the reload lock. */
export interface Sets {
  current: ExtensionSet
  readonly root: DispatchContext
  readonly reloading: Reloading | undefined
  readonly lock: Semaphore.Semaphore
  /** Where a reload starts extensions: closed after the host's own close (its session_end) has run. */
  readonly scope: Scope.Scope
  /** Set when the host closes: a reload then is refused. */
  closed: boolean
  /** How many sets were swapped in: an outcome judged while it was N is the current set's while it still is. */
  generation: number
}

// Each extension a reloadable host started, with the scope it alone lives in (closed when it leaves the set).
// Extensions given to the host by its caller have none: they are closed with the caller's scope.
const ownScopes = new WeakMap<Extension, Scope.Closeable>()

/**
 * Start each extension in a scope of its own, under one that closes them all at once: every close may wait
 * session_end's timeout and two graces, and eight hung extensions closed one after another would take eight times
 * as long. Within one extension the close sequence keeps its order.
 */
export const startExtensions = (
  configs: ReadonlyArray<ExtensionConfig>,
  start: Reloading["start"]
): Effect.Effect<ReadonlyArray<Extension>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const all = yield* Scope.fork(yield* Effect.scope, "parallel")
    return yield* Effect.forEach(
      configs,
      (x) =>
        Effect.flatMap(Scope.fork(all, "sequential"), (own) =>
          Effect.tap(Scope.provide(start(x), own), (extension) => Effect.sync(() => ownScopes.set(extension, own)))
        ),
      { concurrency: "unbounded" }
    )
  })

/**
 * A dispatch context over `extensions` with `settings`, sharing the first context's counters (the audit's `seq`,
 * the round ids: a kept extension never sees an id twice) and everything else it holds.
 */
const deriveContext = (
  root: DispatchContext,
  extensions: ReadonlyArray<Extension>,
  settings: Settings,
  reported: ReadonlySet<string>
): DispatchContext => {
  const ctx: DispatchContext = {
    ...root,
    ...makeRoundContext(extensions),
    nextId: root.nextId,
    reported: new Set([...reported].filter((name) => extensions.some((x) => x.name === name))),
    ...settings
  }
  Object.defineProperty(ctx, "seq", {
    get: () => root.seq,
    set: (n: number) => {
      root.seq = n
    },
    enumerable: true
  })
  return ctx
}

/**
 * The first set: the host's startup context, extensions and tools. Its prints are taken now, though only a reload
 * reads them: they are what a reload compares against, so they must hold the scripts as they were when the set
 * started; taken at the first reload, they would read an edited script as the old one and keep it running.
 */
export const makeSets = (
  ctx: DispatchContext,
  extensions: ReadonlyArray<Extension>,
  tools: ReadonlyArray<AcceptedTool>,
  reloading: Reloading | undefined
): Effect.Effect<Sets, never, Scope.Scope> =>
  Effect.gen(function* () {
    const roots = reloading?.roots ?? []
    const baseDir = reloading?.baseDir ?? "."
    const prints = new Map<string, string>()
    for (const x of extensions) prints.set(x.name, yield* printOf(roots, absolute(baseDir)(x.config)))
    const current = makeSet({ ctx, extensions, tools, prints, fingerprint: fingerprintOf(settingsOf(ctx), prints) })
    const scope = yield* Scope.fork(yield* Effect.scope, "parallel")
    return { current, root: ctx, reloading, lock: yield* Semaphore.make(1), scope, closed: false, generation: 0 }
  })

/** Run `f` over the current set, counted in it until it ends: a reload ends nothing it uses before then. */
export const using = <A, E>(
  sets: Sets,
  f: (set: ExtensionSet) => Effect.Effect<A, E>,
  closed: () => A
): Effect.Effect<A, E> =>
  Effect.suspend(() => {
    // Once the host is closing or closed, no set is current: `closed` answers at once (ExtensionHost.ts).
    if (sets.closed) return Effect.succeed(closed())
    const set = sets.current
    set.running++
    // The release is synchronous: no finalizer effect (`undefined`: nothing to run after it, so no flatMap per
    // call). Not `interruptible`: with it, an interrupted call's release went missing and held the next reload up
    // (Reload.test.ts, "a call whose caller went away").
    return Effect.onExitPrimitive(f(set), set.release)
  })

const idle = (set: ExtensionSet): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    if (set.running === 0) return resume(Effect.void)
    const wake = () => resume(Effect.void)
    set.whenIdle.push(wake)
    return Effect.sync(() => {
      const i = set.whenIdle.indexOf(wake)
      if (i >= 0) set.whenIdle.splice(i, 1)
    })
  })

/**
 * session_end to the extensions leaving the set (audited like the one at close), then each one's own scope closed
 * (stdin, grace, signals). Not to one still busy: its request is one whose caller went away.
 */
const retire = (ctx: DispatchContext, leaving: ReadonlyArray<Extension>): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (leaving.length === 0) return
    const busy = leaving.filter((x) => x.idle?.() === false).map((x) => x.name)
    const note =
      busy.length === 0
        ? []
        : [`session_end not sent to ${busy.join(", ")}: still busy with a request whose caller went away`]
    yield* single(
      ctx,
      "session_end",
      { event: "session_end", session_id: ctx.sessionId },
      () => ({ outcome: {}, notes: note }),
      new Set(busy)
    )
    yield* Effect.forEach(
      leaving,
      (x) => {
        const own = ownScopes.get(x)
        return own === undefined ? Effect.void : Scope.close(own, Exit.void)
      },
      { concurrency: "unbounded", discard: true }
    )
  })

/** Switch `sets` to `next` (one reload at a time; see the top of this file). */
export const reload = (sets: Sets, next: ReloadInput): Effect.Effect<ReloadReport, ReloadRejected> =>
  sets.lock.withPermit(
    Effect.gen(function* () {
      if (sets.closed) return yield* new ReloadRejected({ reason: "the session has ended" })
      const old = sets.current
      const reloading = sets.reloading
      const plan = yield* planReload(old, next, reloading)
      const { kept, settings } = plan
      // Started in a scope of their own until the swap: a reload interrupted before it closes them again.
      const staging = yield* Scope.fork(sets.scope, "parallel")
      const started =
        reloading === undefined || plan.fresh.length === 0
          ? []
          : yield* startExtensions(plan.fresh, reloading.start).pipe(Scope.provide(staging))
      const set = yield* Effect.gen(function* () {
        const extensions = sortByName([...kept, ...started])
        // Deaths said already are the kept processes' alone: one started again under the same name is another
        // process, and its death is said too (once: at session_start or at a later call).
        const keptNames = new Set(kept.map((x) => x.name))
        const ctx = deriveContext(
          sets.root,
          extensions,
          settings,
          new Set([...old.ctx.reported].filter((n) => keptNames.has(n)))
        )
        if (started.length > 0) {
          const startCtx = deriveContext(sets.root, sortByName(started), settings, new Set())
          yield* single(startCtx, "session_start", { event: "session_start", session_id: ctx.sessionId }, () => ({
            outcome: {},
            notes: []
          }))
          for (const name of startCtx.reported) ctx.reported.add(name)
        }
        const tools = yield* ListTools.listTools(ctx)
        yield* ListTools.sayAtStart(tools)
        return makeSet({
          ctx,
          extensions,
          tools: tools.accepted,
          prints: plan.prints,
          fingerprint: fingerprintOf(settings, plan.prints)
        })
      }).pipe(Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Scope.close(staging, exit))))
      const report = reportOf(old, plan, started, set.fingerprint)
      sets.current = set
      // A reload that changed nothing (a save of the same text, the trust store touched) leaves the verdicts the set
      // gave standing: only a set that may judge otherwise is a new generation (a started extension included: one
      // that was dead and is running again may veto).
      if (report.before !== report.after || started.length > 0 || report.removed.length > 0) sets.generation++
      yield* record(set.ctx, report)
      // Calls that began over the old set finish over it; then what it alone held ends.
      yield* idle(old)
      yield* retire(deriveContext(sets.root, plan.leaving, settingsOf(old.ctx), old.ctx.reported), plan.leaving)
      return report
    })
  )

/** The audit's `reload` record: what changed, and the set's fingerprints before and after. */
const record = (ctx: DispatchContext, report: ReloadReport): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (!ctx.recording) return Effect.void
    const seq = ctx.seq++
    const { after, before, ...outcome } = report
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      ctx.audit.record({
        seq,
        session_id: ctx.sessionId,
        time: new Date(now).toISOString(),
        event: "reload",
        call_id: undefined,
        rounds: [],
        outcome,
        notes: [],
        duration_ms: 0,
        reload: { before, after }
      })
    )
  })
