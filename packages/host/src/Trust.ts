import { Context, Effect, Layer, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describeChanges, type ProjectPrint } from "./Fingerprint.ts"

/**
 * Whether a project's config layer may run (docs/configuration.md#trust). A repository's `.abhed/abhed.json` is a
 * file someone else wrote: its extensions start only once the user has trusted that content, and trust is bound to
 * the fingerprint (Fingerprint.ts), so any change (a setting, a command, one byte of a script) makes it untrusted
 * again, with a list of what changed. The layer loader consults the `Trust` service; the store keeps, per project
 * root, the fingerprint trusted and when.
 */

export type TrustVerdict =
  | { readonly trusted: true }
  /** `changes`: what differs from what was trusted (or why nothing was: never trusted, store unreadable). */
  | { readonly trusted: false; readonly changes: ReadonlyArray<string> }

const ScriptEntry = Schema.Struct({ path: Schema.String, sha256: Schema.NullOr(Schema.String) })
const ExtensionEntry = Schema.Struct({
  name: Schema.String,
  command: Schema.String,
  args: Schema.Array(Schema.String),
  cwd: Schema.String,
  env_keys: Schema.Array(Schema.String),
  definition: Schema.String,
  scripts: Schema.Array(ScriptEntry)
})
const TrustEntry = Schema.Struct({
  root: Schema.String,
  file: Schema.String,
  settings: Schema.String,
  extensions: Schema.Array(ExtensionEntry),
  fingerprint: Schema.String,
  trusted_at: Schema.String
})
export type TrustEntry = typeof TrustEntry.Type
const TrustStoreFile = Schema.Struct({ version: Schema.Literal(1), projects: Schema.Record(Schema.String, TrustEntry) })
export type TrustStoreFile = typeof TrustStoreFile.Type

const decodeStore = Schema.decodeUnknownResult(Schema.fromJsonString(TrustStoreFile))

/** The trust store could not be read or written, or is not a trust store. */
export class TrustStoreError extends Schema.TaggedError<TrustStoreError>()("TrustStoreError", {
  file: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.file}: ${this.detail}`
  }
}

const empty: TrustStoreFile = { version: 1, projects: {} }

const codeOf = (e: unknown): unknown => (typeof e === "object" && e !== null && "code" in e ? e.code : undefined)

/**
 * Why a store whose file and folder are as `stat` says cannot be believed, if it cannot: whoever can write it can
 * trust any project. Its file must be the user's and writable by them alone (it is written 0600); its folder not
 * writable by others (where anyone could put a store of their own in its place).
 */
export const storeModeProblem = (
  file: { readonly uid: number; readonly mode: number },
  folder: { readonly mode: number },
  uid: number | undefined
): string | undefined => {
  const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`
  if (uid !== undefined && file.uid !== uid) return `is owned by another user (uid ${file.uid}): remove it`
  if ((file.mode & 0o022) !== 0) return `is writable by others (mode ${octal(file.mode)}): chmod 600 it, or remove it`
  if ((folder.mode & 0o002) !== 0) {
    return `is in a folder writable by others (mode ${octal(folder.mode)}): chmod 700 the folder, or remove the store`
  }
  return undefined
}

/** The store at `file`; a missing store is an empty one; one that others could have written trusts nothing. */
export const readTrustStore = (file: string): Effect.Effect<TrustStoreFile, TrustStoreError> =>
  Effect.gen(function* () {
    const read = yield* Effect.tryPromise({
      try: async () => {
        const handle = await NodeFs.promises.open(file, "r").catch((e: unknown) => {
          if (codeOf(e) === "ENOENT") return undefined
          throw e
        })
        if (handle === undefined) return undefined
        try {
          // The descriptor's own stat: what is read is what was checked.
          const [stats, folder] = await Promise.all([handle.stat(), NodeFs.promises.stat(NodePath.dirname(file))])
          return { text: await handle.readFile("utf8"), problem: storeModeProblem(stats, folder, process.getuid?.()) }
        } finally {
          await handle.close()
        }
      },
      catch: (e) => new TrustStoreError({ file, detail: `cannot read the trust store: ${String(e)}` })
    })
    if (read === undefined) return empty
    if (read.problem !== undefined) {
      return yield* new TrustStoreError({ file, detail: `the trust store ${read.problem}; it trusts nothing` })
    }
    const decoded = decodeStore(read.text)
    if (decoded._tag === "Failure") {
      return yield* new TrustStoreError({
        file,
        detail: `not a valid trust store (fix or remove it): ${String(decoded.failure)}`
      })
    }
    return decoded.success
  })

/** Write the store: its folder 0700, the file 0600 (written aside, then renamed over: never half written). */
const writeTrustStore = (file: string, store: TrustStoreFile): Effect.Effect<void, TrustStoreError> =>
  Effect.tryPromise({
    try: async () => {
      await NodeFs.promises.mkdir(NodePath.dirname(file), { recursive: true, mode: 0o700 })
      const aside = `${file}.${process.pid}.tmp`
      await NodeFs.promises.writeFile(aside, `${JSON.stringify(store, null, 2)}\n`, { mode: 0o600 })
      await NodeFs.promises.chmod(aside, 0o600)
      await NodeFs.promises.rename(aside, file)
    },
    catch: (e) => new TrustStoreError({ file, detail: `cannot write the trust store: ${String(e)}` })
  })

/** Trust `print` (its project root) from now on. */
export const recordTrust = (file: string, print: ProjectPrint, now: Date): Effect.Effect<void, TrustStoreError> =>
  Effect.flatMap(readTrustStore(file), (store) =>
    writeTrustStore(file, {
      version: 1,
      projects: { ...store.projects, [print.root]: { ...print, trusted_at: now.toISOString() } }
    })
  )

/** Forget the trust of the project at `root`; whether it was trusted. */
export const removeTrust = (file: string, root: string): Effect.Effect<boolean, TrustStoreError> =>
  Effect.flatMap(readTrustStore(file), (store) => {
    if (!Object.hasOwn(store.projects, root)) return Effect.succeed(false)
    const projects = Object.fromEntries(Object.entries(store.projects).filter(([key]) => key !== root))
    return Effect.as(writeTrustStore(file, { version: 1, projects }), true)
  })

/** The verdict of the store on `print`: trusted when the fingerprint recorded for its root is this one. */
export const verdictOf = (store: TrustStoreFile, print: ProjectPrint): TrustVerdict => {
  const entry = Object.hasOwn(store.projects, print.root) ? store.projects[print.root] : undefined
  if (entry === undefined) return { trusted: false, changes: ["this project's config has never been trusted"] }
  if (entry.fingerprint === print.fingerprint) return { trusted: true }
  return { trusted: false, changes: describeChanges(entry, print) }
}

/** The store's verdict; an unreadable store trusts nothing (and says why). */
export const checkStore = (file: string, print: ProjectPrint): Effect.Effect<TrustVerdict> =>
  readTrustStore(file).pipe(
    Effect.map((store) => verdictOf(store, print)),
    Effect.catch((e) => Effect.succeed<TrustVerdict>({ trusted: false, changes: [e.message] }))
  )

/** The default store: `$XDG_CONFIG_HOME/abhed/trust.json`, else `~/.config/abhed/trust.json`. */
export const defaultTrustStore = (env: { readonly [name: string]: string | undefined }, home: string): string =>
  NodePath.join(configHome(env, home), "abhed", "trust.json")

/** `$XDG_CONFIG_HOME` when set to an absolute path (as the XDG rules say), else `~/.config`. */
export const configHome = (env: { readonly [name: string]: string | undefined }, home: string): string => {
  const xdg = env["XDG_CONFIG_HOME"]
  return xdg !== undefined && NodePath.isAbsolute(xdg) ? xdg : NodePath.join(home, ".config")
}

/**
 * The service the layer loader consults for a project layer. Layers:
 * - `Trust.layer(storeFile)`: the store decides, nothing is asked (what `abhed-ext run` uses: trusting is an
 *   explicit act, `abhed-ext trust`);
 * - `Trust.layerPrompt(storeFile, ask)`: the store, and when it does not match, `ask` (an embedder's prompt,
 *   shown the print and what changed); a yes is recorded;
 * - `Trust.layerFake(decide)`: for tests.
 */
export class Trust extends Context.Service<
  Trust,
  {
    readonly check: (print: ProjectPrint) => Effect.Effect<TrustVerdict>
  }
>()("@abhed/host/Trust") {
  static readonly layer = (storeFile: string): Layer.Layer<Trust> =>
    Layer.succeed(Trust, Trust.of({ check: (print) => checkStore(storeFile, print) }))
  static readonly layerPrompt = (
    storeFile: string,
    ask: (print: ProjectPrint, changes: ReadonlyArray<string>) => Effect.Effect<boolean>
  ): Layer.Layer<Trust> =>
    Layer.succeed(
      Trust,
      Trust.of({
        check: (print) =>
          Effect.flatMap(checkStore(storeFile, print), (verdict) =>
            verdict.trusted
              ? Effect.succeed(verdict)
              : Effect.flatMap(
                  ask(print, verdict.changes),
                  (yes): Effect.Effect<TrustVerdict> =>
                    yes
                      ? recordTrust(storeFile, print, new Date()).pipe(
                          Effect.as<TrustVerdict>({ trusted: true }),
                          Effect.catch((e) => Effect.succeed<TrustVerdict>({ trusted: false, changes: [e.message] }))
                        )
                      : Effect.succeed(verdict)
                )
          )
      })
    )
  static readonly layerFake = (decide: (print: ProjectPrint) => boolean): Layer.Layer<Trust> =>
    Layer.succeed(
      Trust,
      Trust.of({
        check: (print) =>
          Effect.succeed<TrustVerdict>(
            decide(print) ? { trusted: true } : { trusted: false, changes: ["not trusted (fake)"] }
          )
      })
    )
}
