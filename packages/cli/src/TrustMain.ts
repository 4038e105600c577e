import {
  type ExtensionPrint,
  findProjectLayer,
  fingerprintProject,
  type ProjectPrint,
  readTrustStore,
  recordTrust,
  removeTrust,
  type TrustStoreError,
  verdictOf
} from "@abhed/host"
import { printable } from "@abhed/host/Printable"
import type { ExtensionConfig } from "@abhed/protocol"
import { Console, Effect, Option, Runtime, Schema } from "effect"
import { Command } from "effect/cli"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeReadline from "node:readline/promises"
import { loadConfig } from "./ConfigFile.ts"
import { trustStoreFile } from "./Layers.ts"

import type { trustFlags, untrustFlags } from "./TrustCommand.ts"

/**
 * `abhed-ext trust [DIR]`, `trust --list`, `untrust [DIR]` (docs/configuration.md#trust): the explicit act that lets a
 * project's `.abhed/abhed.json` run. `trust` shows every process the project layer would start, with the digests
 * of its scripts, and what changed since it was last trusted; then asks on a terminal, or takes `--yes`.
 */

/** Trust was not given (declined, no terminal to ask on, no project, a store that cannot be written): exit 1. */
export class TrustNotGiven extends Schema.TaggedError<TrustNotGiven>()("TrustNotGiven", { detail: Schema.String }) {
  override get [Runtime.errorExitCode](): number {
    return 1
  }
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    return this.detail
  }
}

const fail = (detail: string) => Effect.andThen(Console.error(detail), Effect.fail(new TrustNotGiven({ detail })))
const storeFailed = (command: string) => (e: TrustStoreError) => fail(`${command}: ${e.message}`)

const dirOf = (dir: Option.Option<string>): string => NodePath.resolve(Option.getOrElse(dir, () => "."))

/**
 * One process. The env values and `env_passthrough` are shown whole: a value (`NODE_OPTIONS`, `PATH`) can change what
 * runs, and a passthrough hands the repository's script your variables (`*`: every API key).
 */
const showExtension = (root: string, x: ExtensionPrint, config: ExtensionConfig | undefined): ReadonlyArray<string> => [
  `  ${x.name}`,
  `    command  ${JSON.stringify(x.command)}`,
  `    args     ${JSON.stringify(x.args)}`,
  `    cwd      ${x.cwd}`,
  `    env      ${x.env_keys.length === 0 ? "(none set)" : config === undefined ? x.env_keys.join(", ") : x.env_keys.map((k) => `${k}=${JSON.stringify(config.env[k])}`).join(" ")}`,
  ...(config !== undefined && config.env_passthrough.length > 0
    ? [`    passes   ${JSON.stringify(config.env_passthrough)} from your environment`]
    : []),
  ...(x.scripts.length === 0
    ? ["    scripts  (none named)"]
    : x.scripts.map(
        (s, i) =>
          `    ${i === 0 ? "scripts " : "        "} ${NodePath.join(root, s.path)}  ${s.sha256 === null ? "(missing)" : `sha256:${s.sha256}`}`
      ))
]

/**
 * What `trust` shows before it asks. Every line quotes the repository's config (a command, its args, a cwd, env
 * keys, script paths), which is what the user trusts on sight: shown escaped (`printable`), so that no escape
 * sequence can erase or rewrite a line on the terminal, and no bidirectional override can show a command reversed.
 */
export const describeProject = (
  print: ProjectPrint,
  changes: ReadonlyArray<string> | undefined,
  extensions: ReadonlyArray<ExtensionConfig> = []
): string =>
  [
    `project ${print.root}`,
    `config  ${print.file}`,
    ...(changes !== undefined ? ["", "not trusted:", ...changes.map((c) => `  - ${c}`)] : []),
    "",
    print.extensions.length === 0
      ? "it starts no process (its policy and settings apply)"
      : `it would start ${print.extensions.length} process${print.extensions.length === 1 ? "" : "es"}:`,
    ...print.extensions.flatMap((x) =>
      showExtension(
        print.root,
        x,
        extensions.find((c) => c.name === x.name)
      )
    )
  ]
    .map(printable)
    .join("\n")

const ask = (question: string): Effect.Effect<boolean> =>
  Effect.promise(async () => {
    const rl = NodeReadline.createInterface({ input: process.stdin, output: process.stderr })
    try {
      return /^y(es)?$/iu.test((await rl.question(question)).trim())
    } finally {
      rl.close()
    }
  })

const listTrusted = Effect.gen(function* () {
  const store = yield* readTrustStore(trustStoreFile()).pipe(Effect.catch(storeFailed("abhed-ext trust")))
  const entries = Object.values(store.projects).sort((a, b) => (a.root < b.root ? -1 : 1))
  if (entries.length === 0) return yield* Console.log("no project is trusted")
  for (const e of entries) {
    yield* Console.log(
      printable(`${e.root}  trusted ${e.trusted_at}  (${e.extensions.map((x) => x.name).join(", ") || "no extension"})`)
    )
  }
})

/** What `abhed-ext trust` does once its flags are parsed (TrustCommand.ts). */
export const trustMain = Effect.fn("trust")(function* ({
  dir,
  list,
  yes
}: Command.Command.Config.Infer<typeof trustFlags>) {
  if (list) return yield* listTrusted
  const from = dirOf(dir)
  // A misspelt folder must not fall back to its parent's project: `trust ~/src/ap` would trust ~/src's (or the
  // folder you stand in, for `trust nope`), which is not the project named.
  const notFolder = yield* Effect.promise(() =>
    NodeFs.promises.stat(from).then(
      (s) => (s.isDirectory() ? undefined : "is not a folder"),
      (e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? "no such folder" : `cannot be read (${e.code ?? e.message})`)
    )
  )
  if (notFolder !== undefined) return yield* fail(`abhed-ext trust: ${printable(from)}: ${notFolder}`)
  const found = yield* findProjectLayer(from)
  if (found === undefined) {
    return yield* fail(`abhed-ext trust: no .abhed/abhed.json in ${from} (nor in a parent up to the repository root)`)
  }
  const loaded = yield* loadConfig(found.file)
  const print = yield* fingerprintProject(found.root, loaded)
  const store = trustStoreFile()
  const verdict = verdictOf(yield* readTrustStore(store).pipe(Effect.catch(storeFailed("abhed-ext trust"))), print)
  yield* Console.log(describeProject(print, verdict.trusted ? undefined : verdict.changes, loaded.config.extensions))
  if (verdict.trusted) return yield* Console.log("\nalready trusted, as it is")
  const given =
    yes || (process.stdin.isTTY === true && (yield* ask("\nTrust it, and let these processes start? [y/N] ")))
  if (!given) {
    return yield* fail(
      process.stdin.isTTY === true
        ? "abhed-ext trust: not trusted"
        : `abhed-ext trust: not trusted (no terminal to ask on): review the above, then run \`abhed-ext trust --yes ${printable(found.root)}\``
    )
  }
  yield* recordTrust(store, print, new Date()).pipe(Effect.catch(storeFailed("abhed-ext trust")))
  yield* Console.log(`\ntrusted: ${found.root} (recorded in ${store})`)
})

/** What `abhed-ext untrust` does once its flags are parsed (TrustCommand.ts). */
export const untrustMain = Effect.fn("untrust")(function* ({ dir }: Command.Command.Config.Infer<typeof untrustFlags>) {
  const from = dirOf(dir)
  const found = yield* findProjectLayer(from)
  // A project whose .abhed is gone can still be forgotten, by its folder.
  const root = found?.root ?? (yield* Effect.promise(() => NodeFs.promises.realpath(from).catch(() => from)))
  const removed = yield* removeTrust(trustStoreFile(), root).pipe(Effect.catch(storeFailed("abhed-ext untrust")))
  yield* Console.log(removed ? `no longer trusted: ${root}` : `was not trusted: ${root}`)
})
