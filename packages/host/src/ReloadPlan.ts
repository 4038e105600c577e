import { canonicalJson, type Config, type ExtensionConfig } from "@abhed/protocol"
import type { LayerPolicy } from "@abhed/core"
import { Effect, Schema } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodePath from "node:path"
import type { DispatchContext } from "./dispatch/Dispatch.ts"
import type { Extension } from "./Extension.ts"
import { scriptsOf } from "./Fingerprint.ts"

/**
 * What a reload will do, decided before it starts anything (Reload.ts runs it): which running extensions stay (the
 * definition and scripts unchanged, and alive), which configs start afresh (changed, dead or new), which running ones
 * leave, and the settings the new set switches to; or why the reload is refused with nothing changed.
 */

/** The config a reload switches to. */
export interface ReloadInput {
  readonly config: Config
  /** One policy per config layer (`loadLayers`), joined; without it, the config's own `policy`. */
  readonly policies?: ReadonlyArray<LayerPolicy> | undefined
  /** What the config's relative `cwd`s resolve against (default: the host's). */
  readonly baseDir?: string | undefined
  /** Where scripts are looked for (default: the host's roots). */
  readonly roots?: ReadonlyArray<string> | undefined
}

/** What a reload did, by extension name (each list in name order), and the set's fingerprints before and after. */
export interface ReloadReport {
  readonly kept: ReadonlyArray<string>
  readonly restarted: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  readonly added: ReadonlyArray<string>
  readonly before: string
  readonly after: string
}

/** A reload refused before anything changed: the set running stays as it was. */
export class ReloadRejected extends Schema.TaggedError<ReloadRejected>()("ReloadRejected", {
  reason: Schema.String
}) {
  override get message(): string {
    return `reload rejected, the extensions running are unchanged: ${this.reason}`
  }
}

/** What a set switches with besides its extensions. */
export interface Settings {
  readonly policy: DispatchContext["policy"]
  readonly policies: DispatchContext["policies"]
  readonly maxRounds: number
  readonly builtin: ReadonlyArray<string>
}

export const settingsOf = (ctx: DispatchContext): Settings => ({
  policy: ctx.policy,
  policies: ctx.policies,
  maxRounds: ctx.maxRounds,
  builtin: ctx.builtin
})

const sha256 = (text: string): string => NodeCrypto.createHash("sha256").update(text).digest("hex")

export const absolute =
  (baseDir: string) =>
  (x: ExtensionConfig): ExtensionConfig => ({ ...x, cwd: NodePath.resolve(baseDir, x.cwd ?? ".") })

/** An extension's digest: its definition with an absolute cwd, and the digests of its scripts under `roots`. */
export const printOf = (roots: ReadonlyArray<string>, x: ExtensionConfig): Effect.Effect<string> =>
  Effect.map(
    Effect.forEach(roots, (root) =>
      Effect.map(scriptsOf(root, x.cwd ?? ".", x), (scripts) =>
        scripts.map((s) => [NodePath.join(root, s.path), s.sha256] as const)
      )
    ),
    // By absolute path, once: a file an argument names counts under every root, and the roots change with trust.
    (scripts) =>
      sha256(
        canonicalJson({
          definition: x,
          scripts: [...new Map(scripts.flat())].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        })
      )
  )

export const fingerprintOf = (settings: Settings, prints: ReadonlyMap<string, string>): string =>
  sha256(canonicalJson({ settings, extensions: Object.fromEntries(prints) }))

const duplicatesOf = (configs: ReadonlyArray<ExtensionConfig>): ReadonlyArray<string> => {
  const seen = new Set<string>()
  const twice = new Set<string>()
  for (const x of configs) (seen.has(x.name) ? twice : seen).add(x.name)
  return [...twice].sort()
}

/** Where a reload looks, from the host's reloading; absent for a host made over extensions given to it. */
export interface PlanPlaces {
  readonly baseDir: string
  readonly roots: ReadonlyArray<string>
  readonly builtinTools: ReadonlyArray<string>
}

/** The set a reload starts from: its extensions (in name order) and their digests. */
export interface PlanFrom {
  readonly extensions: ReadonlyArray<Extension>
  readonly prints: ReadonlyMap<string, string>
}

export interface ReloadPlan {
  /** The new config's extensions, `cwd` made absolute. */
  readonly configs: ReadonlyArray<ExtensionConfig>
  readonly prints: ReadonlyMap<string, string>
  /** Running extensions the new set keeps as they are. */
  readonly kept: ReadonlyArray<Extension>
  /** Configs to start: changed, dead or new. */
  readonly fresh: ReadonlyArray<ExtensionConfig>
  /** Running extensions the new set no longer has (removed, or replaced by a fresh start). */
  readonly leaving: ReadonlyArray<Extension>
  readonly settings: Settings
}

/** Plan the switch from `old` to `next`, or refuse it (duplicate names; a host that cannot start what changed). */
export const planReload = (
  old: PlanFrom,
  next: ReloadInput,
  places: PlanPlaces | undefined
): Effect.Effect<ReloadPlan, ReloadRejected> =>
  Effect.gen(function* () {
    const twice = duplicatesOf(next.config.extensions)
    if (twice.length > 0) {
      return yield* new ReloadRejected({ reason: `extension names must be unique: ${twice.join(", ")}` })
    }
    const configs = next.config.extensions.map(absolute(next.baseDir ?? places?.baseDir ?? "."))
    const roots = next.roots ?? places?.roots ?? []
    const prints = new Map<string, string>()
    for (const x of configs) prints.set(x.name, yield* printOf(roots, x))
    const byName = new Map(old.extensions.map((x) => [x.name, x]))
    // A dead extension has no process to keep: unchanged or not, a reload starts it again.
    const dead = new Set<string>()
    for (const x of old.extensions) if ((yield* x.status).state._tag === "dead") dead.add(x.name)
    const same = (x: ExtensionConfig) => old.prints.get(x.name) === prints.get(x.name) && !dead.has(x.name)
    const fresh = configs.filter((x) => !same(x))
    if (fresh.length > 0 && places === undefined) {
      return yield* new ReloadRejected({
        reason: `this host was made over extensions given to it and cannot start any: ${fresh.map((x) => x.name).join(", ")}`
      })
    }
    const kept = configs.filter(same).flatMap((x) => {
      const running = byName.get(x.name)
      return running === undefined ? [] : [running]
    })
    const keptNames = new Set(kept.map((x) => x.name))
    const settings: Settings = {
      policy: next.config.policy,
      policies: next.policies,
      maxRounds: next.config.max_rewrite_rounds,
      builtin: [...new Set([...next.config.builtin_tools, ...(places?.builtinTools ?? [])])].sort()
    }
    return { configs, prints, kept, fresh, leaving: old.extensions.filter((x) => !keptNames.has(x.name)), settings }
  })

/** The report of a planned reload once `started` are running and the new set's fingerprint is `after`. */
export const reportOf = (
  old: PlanFrom & { readonly fingerprint: string },
  plan: ReloadPlan,
  started: ReadonlyArray<Extension>,
  after: string
): ReloadReport => {
  const names = (xs: ReadonlyArray<{ readonly name: string }>) => xs.map((x) => x.name).sort()
  const before = new Set(old.extensions.map((x) => x.name))
  const newNames = new Set(plan.configs.map((x) => x.name))
  return {
    kept: names(plan.kept),
    restarted: names(started.filter((x) => before.has(x.name))),
    removed: names(old.extensions.filter((x) => !newNames.has(x.name))),
    added: names(started.filter((x) => !before.has(x.name))),
    before: old.fingerprint,
    after
  }
}
