import { canonicalJson, type ExtensionConfig } from "@abhed/protocol"
import { Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { LoadedConfig } from "./ConfigLoader.ts"

/**
 * What a project layer is trusted for: its content, not its name. The fingerprint covers the canonical config
 * (comments and spacing do not count, every setting does) and the bytes of every file an extension's arguments,
 * relative command or loader variables (`NODE_OPTIONS`, `LD_PRELOAD`, ...) name, wherever it leads, and of its
 * command when that is inside the project (its scripts), so a trusted config cannot run a swapped script. A file
 * that is named but missing counts too: creating it later changes the fingerprint. What a script loads by itself
 * (an import, a file it reads) is not covered: name it as an argument to have it covered.
 */

export interface ScriptPrint {
  /** Relative to the project root. */
  readonly path: string
  /** Hex sha256 of the file's bytes; null when no such file exists. */
  readonly sha256: string | null
}

export interface ExtensionPrint {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The working directory it would start in (absolute). */
  readonly cwd: string
  /** The names of the variables it sets (the values are in `definition`). */
  readonly env_keys: ReadonlyArray<string>
  /** Hex sha256 of the extension's canonical definition (every field, as decoded). */
  readonly definition: string
  readonly scripts: ReadonlyArray<ScriptPrint>
}

export interface ProjectPrint {
  /** The project root: the folder holding `.abhed/`. */
  readonly root: string
  /** The project layer's config file. */
  readonly file: string
  /** Hex sha256 of everything in the config but the extensions (policy, builtin_tools, ...). */
  readonly settings: string
  readonly extensions: ReadonlyArray<ExtensionPrint>
  /** Hex sha256 of all of the above: what the trust store keeps. */
  readonly fingerprint: string
}

const sha256 = (data: string | Uint8Array): string => NodeCrypto.createHash("sha256").update(data).digest("hex")

const inside = (root: string, file: string): boolean => {
  const rel = NodePath.relative(root, file)
  // `..bin/x` is inside: only a first segment of exactly `..` leaves.
  return rel !== "" && rel.split(NodePath.sep)[0] !== ".." && !NodePath.isAbsolute(rel)
}

/**
 * The bytes' digest of a regular file; null when there is none; a folder or a device is no script (undefined). The
 * file is opened without blocking and checked on its descriptor (a FIFO swapped in cannot hang the open), and read
 * in chunks into the hash: a config can name any file on the machine, a huge one included, before it is trusted.
 */
const digestOf = (file: string): Effect.Effect<string | null | undefined> =>
  Effect.promise(async () => {
    try {
      const handle = await NodeFs.promises.open(file, NodeFs.constants.O_RDONLY | NodeFs.constants.O_NONBLOCK)
      try {
        if (!(await handle.stat()).isFile()) return undefined
        const hash = NodeCrypto.createHash("sha256")
        const chunk = Buffer.alloc(1 << 20)
        for (;;) {
          const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
          if (bytesRead === 0) return hash.digest("hex")
          hash.update(chunk.subarray(0, bytesRead))
        }
      } finally {
        await handle.close()
      }
    } catch (e) {
      const code = typeof e === "object" && e !== null && "code" in e ? e.code : undefined
      // Missing: counted as missing. Unreadable: its error and the file's identity stand in for its bytes.
      return code === "ENOENT" || code === "ENOTDIR"
        ? null
        : sha256(`unreadable: ${String(code)}${await identityOf(file)}`)
    }
  })

/**
 * What stands in for the bytes of a file that cannot be read (a program of mode 0111 runs without being readable):
 * its inode, size and change times, which a write or a replacement changes (and a `chmod` too: asked again, never
 * trusted wrongly). The error alone was a constant: such a program could be swapped under a trusted project. Empty
 * when it cannot even be looked up (the folder is not searchable): nothing of it can be known, nor run.
 */
const identityOf = async (file: string): Promise<string> => {
  try {
    const st = await NodeFs.promises.stat(file, { bigint: true })
    return ` ${st.dev}:${st.ino} ${st.size} bytes, modified ${st.mtimeNs}, changed ${st.ctimeNs}`
  } catch {
    return ""
  }
}

const realOrSelf = (file: string): Effect.Effect<string> =>
  Effect.promise(() => NodeFs.promises.realpath(file).catch(() => file))

/**
 * Where a bare command could be found: each entry of the PATH it is started with (the config's own `PATH`, else the
 * host's), so that a project entry on it (`"env": {"PATH": "./bin:/usr/bin"}`, or a relative entry like `.` in
 * the user's PATH, which resolves against the extension's cwd) has its program covered like a script.
 */
const onPath = (x: ExtensionConfig): ReadonlyArray<string> =>
  x.command.includes("/")
    ? [x.command]
    : (x.env["PATH"] ?? process.env["PATH"] ?? "")
        .split(":")
        .map((entry) => (entry === "" ? `./${x.command}` : NodePath.join(entry, x.command)))

/**
 * The variables that make a program load a file before its own code: their values' files count like arguments.
 * `NODE_OPTIONS=--require ./hook.cjs`, `LD_PRELOAD=./hook.so`, `BASH_ENV=./env.sh` run code the command line
 * does not show.
 */
export const LoaderVariables: ReadonlyArray<string> = [
  "NODE_OPTIONS",
  "LD_PRELOAD",
  "LD_AUDIT",
  "BASH_ENV",
  "ENV",
  "PYTHONSTARTUP",
  "PERL5OPT",
  "RUBYOPT",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS"
]

/** The paths a word of a command line names: itself, but not an option; the value of `--x=path`. */
const pathsIn = (w: string): ReadonlyArray<string> => {
  if (!w.startsWith("-")) return [w]
  const eq = w.indexOf("=")
  return eq > 0 ? [w.slice(eq + 1)] : []
}

/** The words of a loader variable's value (`--require ./a.js`, `./a.so:./b.so`), each a word of a command line. */
const loaderWords = (value: string): ReadonlyArray<string> => value.split(/[\s:]+/u).flatMap(pathsIn)

/** The loader variables an extension sets: in `env`, or as `NAME=value` arguments (`env NODE_OPTIONS=... node`). */
const loaderValues = (x: ExtensionConfig): ReadonlyArray<string> => [
  ...LoaderVariables.flatMap((name) => (x.env[name] === undefined ? [] : [x.env[name]])),
  ...x.args.flatMap((a) => {
    const eq = a.indexOf("=")
    return eq > 0 && LoaderVariables.includes(a.slice(0, eq)) ? [a.slice(eq + 1)] : []
  })
]

/**
 * Paths an extension's command line names. `anywhere`: the arguments (but options), the value of `--x=v`, the files
 * of its loader variables, wherever they are (a link, a `cwd` or the config's own folder can lead out of the
 * project), and the command when written as a relative path. `inProject`: the command as an absolute path or found
 * on PATH, counted only inside the project (an interpreter installed on the machine is not the repository's).
 */
const candidates = (
  x: ExtensionConfig
): { readonly anywhere: ReadonlyArray<string>; readonly inProject: ReadonlyArray<string> } => ({
  anywhere: [
    // A command written as a relative path (`./guard`, `../tools/guard`), or found through a relative PATH entry
    // (`../tools/bin`), is the repository's: it resolves against the cwd the config chose, wherever that leads.
    ...onPath(x).filter((w) => !NodePath.isAbsolute(w)),
    ...x.args.flatMap(pathsIn),
    ...loaderValues(x).flatMap(loaderWords)
  ].filter((w) => w !== ""),
  inProject: onPath(x).filter((w) => w !== "" && NodePath.isAbsolute(w))
})

/**
 * Every program in the folders of the `PATH` the config sets by a relative entry (`"PATH": "./bin:/usr/bin"`): a script
 * that runs `jq` runs the repository's `bin/jq`, so each of them counts (and one planted there later is a change).
 */
const programsOnPath = (cwd: string, x: ExtensionConfig): Effect.Effect<ReadonlyArray<string>> =>
  Effect.promise(async () => {
    const path = x.env["PATH"]
    const entries = path === undefined ? [] : path.split(":").filter((e) => e === "" || !NodePath.isAbsolute(e))
    const lists = await Promise.all(
      [...new Set(entries.map((e) => (e === "" ? "." : e)))].map((entry) =>
        NodeFs.promises.readdir(NodePath.resolve(cwd, entry)).then(
          (names) => names.map((name) => NodePath.join(entry, name)),
          () => []
        )
      )
    )
    return lists.flat()
  })

/**
 * Its scripts: the files its arguments name (wherever they are), the command when it is inside the project (as
 * written or once links are resolved), with their digests.
 */
export const scriptsOf = (root: string, cwd: string, x: ExtensionConfig): Effect.Effect<ReadonlyArray<ScriptPrint>> =>
  Effect.gen(function* () {
    const found = new Map<string, string | null>()
    const words = candidates(x)
    const onItsPath = yield* programsOnPath(cwd, x)
    for (const [word, anywhere] of [
      ...words.inProject.map((w) => [w, false] as const),
      ...[...words.anywhere, ...onItsPath].map((w) => [w, true] as const)
    ]) {
      const file = NodePath.resolve(cwd, word)
      if (!anywhere && !inside(root, file) && !inside(root, yield* realOrSelf(file))) continue
      const rel = NodePath.relative(root, file)
      if (found.has(rel)) continue
      const digest = yield* digestOf(file)
      if (digest !== undefined) found.set(rel, digest)
    }
    return [...found]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([path, digest]) => ({ path, sha256: digest }))
  })

/** The working directory an extension of this config starts in. */
export const extensionCwd = (loaded: LoadedConfig, x: ExtensionConfig): string =>
  NodePath.resolve(loaded.baseDir, x.cwd ?? ".")

/** The fingerprint of a project layer whose root (the folder holding `.abhed/`) is `root`. */
export const fingerprintProject = (root: string, loaded: LoadedConfig): Effect.Effect<ProjectPrint> =>
  Effect.gen(function* () {
    const { extensions, ...settings } = loaded.config
    const prints = yield* Effect.forEach(extensions, (x) =>
      Effect.map(
        scriptsOf(root, extensionCwd(loaded, x), x),
        (scripts): ExtensionPrint => ({
          name: x.name,
          command: x.command,
          args: x.args,
          cwd: extensionCwd(loaded, x),
          env_keys: Object.keys(x.env).sort(),
          definition: sha256(canonicalJson(x)),
          scripts
        })
      )
    )
    const settingsDigest = sha256(canonicalJson(settings))
    const fingerprint = sha256(canonicalJson({ file: loaded.file, settings: settingsDigest, extensions: prints }))
    return { root, file: loaded.file, settings: settingsDigest, extensions: prints, fingerprint }
  })

/** What changed from `before` to `now`, one line each: which extension, and in it the command, args, env, scripts. */
export const describeChanges = (before: ProjectPrint, now: ProjectPrint): ReadonlyArray<string> => {
  const lines: Array<string> = []
  if (before.file !== now.file) lines.push(`the config file is now ${now.file} (was ${before.file})`)
  if (before.settings !== now.settings) lines.push("the policy or another setting outside extensions changed")
  const old = new Map(before.extensions.map((x) => [x.name, x]))
  const names = new Set(now.extensions.map((x) => x.name))
  for (const x of before.extensions) if (!names.has(x.name)) lines.push(`extension ${x.name} was removed`)
  for (const x of now.extensions) {
    const was = old.get(x.name)
    if (was === undefined) {
      lines.push(`extension ${x.name} is new`)
      continue
    }
    const at = `extension ${x.name}:`
    if (was.command !== x.command)
      lines.push(`${at} command changed: ${JSON.stringify(was.command)} -> ${JSON.stringify(x.command)}`)
    if (canonicalJson(was.args) !== canonicalJson(x.args)) {
      lines.push(`${at} args changed: ${JSON.stringify(was.args)} -> ${JSON.stringify(x.args)}`)
    }
    if (was.cwd !== x.cwd) lines.push(`${at} cwd changed: ${was.cwd} -> ${x.cwd}`)
    const added = x.env_keys.filter((k) => !was.env_keys.includes(k))
    const removed = was.env_keys.filter((k) => !x.env_keys.includes(k))
    if (added.length + removed.length > 0) {
      lines.push(`${at} env keys changed: ${[...added.map((k) => `+${k}`), ...removed.map((k) => `-${k}`)].join(" ")}`)
    }
    const oldScripts = new Map(was.scripts.map((s) => [s.path, s.sha256]))
    const scriptLines: Array<string> = []
    for (const s of x.scripts) {
      const prior = oldScripts.get(s.path)
      if (prior === undefined) scriptLines.push(`${at} script ${s.path} is newly named`)
      else if (prior !== s.sha256) {
        scriptLines.push(
          s.sha256 === null
            ? `${at} script ${s.path} is gone`
            : prior === null
              ? `${at} script ${s.path} was created`
              : `${at} script ${s.path} changed (sha256 ${prior.slice(0, 12)}… -> ${s.sha256.slice(0, 12)}…)`
        )
      }
    }
    const explained =
      was.command !== x.command ||
      canonicalJson(was.args) !== canonicalJson(x.args) ||
      was.cwd !== x.cwd ||
      added.length + removed.length > 0
    if (was.definition !== x.definition && !explained) {
      lines.push(`${at} its settings changed (env values, events, timeouts, ...)`)
    }
    lines.push(...scriptLines)
  }
  return lines.length > 0 ? lines : ["the fingerprint changed"]
}
