import { readFileSync, realpathSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The startup check of the `abhed-ext` command (`abhed-ext.ts`): is this Node new enough, and are the `effect` and
 * `@effect/platform-node` the CLI would load ones that work together? npm picks versions by the running Node, so
 * an older Node can get `effect` 4.1 beside `@effect/platform-node` 4.0, and the CLI would then die on a missing
 * module deep inside effect. This runs before anything imports effect, so it imports nothing but `node:` modules
 * and must parse on old Nodes (no syntax newer than Node 18's); it reads three package.json files.
 */

export interface Manifest {
  readonly version?: string
  readonly engines?: { readonly node?: string }
  readonly peerDependencies?: { readonly [name: string]: string }
}

/** `4.1.0` → [4, 1, 0]; undefined when it is not a plain version (a prerelease counts as its release). */
const parse = (version: string): [number, number, number] | undefined => {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version.trim())
  return m === null ? undefined : [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)]
}

const compare = (a: readonly [number, number, number], b: readonly [number, number, number]): number =>
  a[0] - b[0] || a[1] - b[1] || a[2] - b[2]

/**
 * Does `version` satisfy `range`? Only the forms our manifests and effect's use: `^X.Y.Z`, `>=X.Y.Z`, `X.Y.Z`.
 * Any other range is taken as satisfied: this check must never stop a working install.
 */
export const satisfies = (version: string, range: string): boolean => {
  const v = parse(version)
  const r = /^\s*(\^|>=)?\s*(\d+(?:\.\d+){0,2})\s*$/.exec(range)
  const low = r === null ? undefined : parse(r[2] ?? "")
  if (v === undefined || r === null || low === undefined) return true
  if (compare(v, low) < 0) return false
  if (r[1] === ">=") return true
  if (r[1] === undefined) return compare(v, low) === 0
  // Caret: the same major, or for 0.x the same minor.
  return low[0] !== 0 ? v[0] === low[0] : v[0] === 0 && v[1] === low[1]
}

/** The version a caret or `>=` range starts at (`^4.1.0` → `4.1.0`): what the hint tells you to install. */
const pinned = (range: string): string => /\d+(?:\.\d+){0,2}/.exec(range)?.[0] ?? "latest"

interface Found {
  readonly dir: string
  readonly manifest: Manifest
}

/** The package `name` as `require` would resolve it from `from` (a directory), or undefined when it is missing. */
const locate = (name: string, from: string): Found | undefined => {
  try {
    const file = createRequire(`${from}/`).resolve(`${name}/package.json`)
    const manifest: Manifest = JSON.parse(readFileSync(file, "utf8"))
    return { dir: realpathSync(dirname(file)), manifest }
  } catch {
    return undefined
  }
}

export interface PreflightInput {
  /** `process.versions.node`. */
  readonly node: string
  /** @abhed/cli's own package.json: its `engines.node` and peer ranges. */
  readonly manifest: Manifest
  /** @abhed/cli's package directory: where its imports resolve from. */
  readonly packageDir: string
}

/** What is wrong, as one line that says what to run; undefined when the CLI can start. */
export const preflightProblem = ({ manifest, node, packageDir }: PreflightInput): string | undefined => {
  const wantsNode = manifest.engines?.node
  if (wantsNode !== undefined && !satisfies(node, wantsNode)) {
    const major = pinned(wantsNode).split(".")[0] ?? ""
    return (
      `abhed-ext: needs Node ${wantsNode} (this is Node ${node}): install Node ${major}, or in this project ` +
      `\`npm install node@${major}\` and run \`npx abhed-ext\` (README, "From the registry")`
    )
  }
  const peers = manifest.peerDependencies ?? {}
  const effectRange = peers["effect"] ?? "*"
  const platformRange = peers["@effect/platform-node"] ?? "*"
  const fix =
    `\`npm install effect@${pinned(effectRange)} @effect/platform-node@${pinned(platformRange)}\`` +
    " (with -g for a global abhed-ext)"
  const effect = locate("effect", packageDir)
  const platform = locate("@effect/platform-node", packageDir)
  if (effect === undefined || platform === undefined) {
    const missing = [
      effect === undefined ? "effect" : undefined,
      platform === undefined ? "@effect/platform-node" : undefined
    ]
      .filter((name) => name !== undefined)
      .join(" and ")
    return `abhed-ext: ${missing} not installed beside @abhed/cli: run ${fix}`
  }
  const effectVersion = effect.manifest.version ?? "?"
  const platformVersion = platform.manifest.version ?? "?"
  const found = `found effect ${effectVersion} and @effect/platform-node ${platformVersion}`
  // The platform's own effect must be the CLI's: two copies of effect do not share their services.
  const platformsEffect = locate("effect", platform.dir)
  const platformWants = platform.manifest.peerDependencies?.["effect"] ?? "*"
  if (
    !satisfies(effectVersion, effectRange) ||
    !satisfies(platformVersion, platformRange) ||
    !satisfies(effectVersion, platformWants) ||
    platformsEffect?.dir !== effect.dir
  ) {
    const copies =
      platformsEffect !== undefined && platformsEffect.dir !== effect.dir
        ? ` (and a second effect, ${platformsEffect.manifest.version ?? "?"}, under @effect/platform-node)`
        : ""
    return (
      `abhed-ext: needs effect ${effectRange} with @effect/platform-node ${platformRange}, ${found}${copies}: ` +
      `run ${fix}`
    )
  }
  return undefined
}

/** The check for the running CLI: its package is one directory up from this file (src/ or dist/). */
export const preflight = (): string | undefined => {
  const packageUrl = new URL("../", import.meta.url)
  const manifest: Manifest = JSON.parse(readFileSync(new URL("package.json", packageUrl), "utf8"))
  return preflightProblem({ node: process.versions.node, manifest, packageDir: fileURLToPath(packageUrl) })
}
