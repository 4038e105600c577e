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
import { Console, Effect, Option, Runtime, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeReadline from "node:readline/promises"
import { loadConfig } from "./ConfigFile.ts"
import { trustStoreFile } from "./Layers.ts"

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

const showExtension = (root: string, x: ExtensionPrint): ReadonlyArray<string> => [
  `  ${x.name}`,
  `    command  ${JSON.stringify(x.command)}`,
  `    args     ${JSON.stringify(x.args)}`,
  `    cwd      ${x.cwd}`,
  `    env      ${x.env_keys.length === 0 ? "(none set)" : x.env_keys.join(", ")}`,
  ...(x.scripts.length === 0
    ? ["    scripts  (none named inside the project)"]
    : x.scripts.map(
        (s, i) =>
          `    ${i === 0 ? "scripts " : "        "} ${NodePath.join(root, s.path)}  ${s.sha256 === null ? "(missing)" : `sha256:${s.sha256}`}`
      ))
]

/** What `trust` shows before it asks. */
export const describeProject = (print: ProjectPrint, changes: ReadonlyArray<string> | undefined): string =>
  [
    `project ${print.root}`,
    `config  ${print.file}`,
    ...(changes !== undefined ? ["", "not trusted:", ...changes.map((c) => `  - ${c}`)] : []),
    "",
    print.extensions.length === 0
      ? "it starts no process (its policy and settings apply)"
      : `it would start ${print.extensions.length} process${print.extensions.length === 1 ? "" : "es"}:`,
    ...print.extensions.flatMap((x) => showExtension(print.root, x))
  ].join("\n")

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
      `${e.root}  trusted ${e.trusted_at}  (${e.extensions.map((x) => x.name).join(", ") || "no extension"})`
    )
  }
})

export const trust = Command.make(
  "trust",
  {
    yes: Flag.Boolean("yes").pipe(
      Flag.withAlias("y"),
      Flag.withDescription("trust without asking (for scripts)"),
      Flag.withDefault(false)
    ),
    list: Flag.Boolean("list").pipe(Flag.withDescription("list the trusted projects"), Flag.withDefault(false)),
    dir: Argument.String("dir").pipe(
      Argument.withDescription(
        "the project (default: the current directory; its nearest .abhed up to the repository root)"
      ),
      Argument.optional
    )
  },
  Effect.fn("trust")(function* ({ dir, list, yes }) {
    if (list) return yield* listTrusted
    const from = dirOf(dir)
    const found = yield* findProjectLayer(from)
    if (found === undefined) {
      return yield* fail(`abhed-ext trust: no .abhed/abhed.json in ${from} (nor in a parent up to the repository root)`)
    }
    const loaded = yield* loadConfig(found.file)
    const print = yield* fingerprintProject(found.root, loaded)
    const store = trustStoreFile()
    const verdict = verdictOf(yield* readTrustStore(store).pipe(Effect.catch(storeFailed("abhed-ext trust"))), print)
    yield* Console.log(describeProject(print, verdict.trusted ? undefined : verdict.changes))
    if (verdict.trusted) return yield* Console.log("\nalready trusted, as it is")
    const given =
      yes || (process.stdin.isTTY === true && (yield* ask("\nTrust it, and let these processes start? [y/N] ")))
    if (!given) {
      return yield* fail(
        process.stdin.isTTY === true
          ? "abhed-ext trust: not trusted"
          : `abhed-ext trust: not trusted (no terminal to ask on): review the above, then run \`abhed-ext trust --yes ${found.root}\``
      )
    }
    yield* recordTrust(store, print, new Date()).pipe(Effect.catch(storeFailed("abhed-ext trust")))
    yield* Console.log(`\ntrusted: ${found.root} (recorded in ${store})`)
  })
).pipe(
  Command.withShortDescription(
    "Trust a project's .abhed/abhed.json, bound to its content, so that `run` starts its extensions"
  ),
  Command.withDescription(
    "Show every process a project's config layer would start (name, command, args, cwd, env keys, and each script " +
      "it names with its sha256) and what changed since it was last trusted, then ask (on a terminal) or take --yes. " +
      "Any later change to the config or to a named script makes it untrusted again. Exit codes: 0 trusted, 1 not " +
      "trusted (declined, no terminal, no project), 2 invalid config."
  ),
  Command.withExamples([
    { command: "abhed-ext trust", description: "review and trust the project you are in" },
    { command: "abhed-ext trust --yes ~/src/app", description: "trust without asking" },
    { command: "abhed-ext trust --list", description: "the trusted projects" }
  ])
)

export const untrust = Command.make(
  "untrust",
  {
    dir: Argument.String("dir").pipe(
      Argument.withDescription("the project (default: the current directory)"),
      Argument.optional
    )
  },
  Effect.fn("untrust")(function* ({ dir }) {
    const from = dirOf(dir)
    const found = yield* findProjectLayer(from)
    // A project whose .abhed is gone can still be forgotten, by its folder.
    const root = found?.root ?? (yield* Effect.promise(() => NodeFs.promises.realpath(from).catch(() => from)))
    const removed = yield* removeTrust(trustStoreFile(), root).pipe(Effect.catch(storeFailed("abhed-ext untrust")))
    yield* Console.log(removed ? `no longer trusted: ${root}` : `was not trusted: ${root}`)
  })
).pipe(
  Command.withShortDescription("Forget the trust of a project: `run` no longer starts its extensions"),
  Command.withExamples([{ command: "abhed-ext untrust", description: "the project you are in" }])
)
