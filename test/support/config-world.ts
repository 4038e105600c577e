import * as NodeFs from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Patient } from "./extension-helpers.ts"

/**
 * A world for the config layers, with real processes: a temporary HOME, XDG_CONFIG_HOME and ABHED_MANAGED_CONFIG
 * (the real /etc and ~ are never read) and a repository with a `src/` to run from. Its extensions append their pid
 * to a marker file when they start and deny every tool call naming themselves, so the output says which ran and
 * the marker whether anything started at all.
 */

export interface World {
  readonly root: string
  readonly repo: string
  readonly env: NodeJS.ProcessEnv
  /** The file an extension of this name appends its pid to. */
  readonly marker: (name: string) => string
  readonly managed: string
  readonly user: string
  readonly project: string
}

export const world = (prefix: string): World => {
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync(join(tmpdir(), prefix)))
  const repo = join(root, "repo")
  NodeFs.mkdirSync(join(repo, ".git"), { recursive: true })
  NodeFs.mkdirSync(join(repo, "src"), { recursive: true })
  return {
    root,
    repo,
    env: {
      HOME: join(root, "home"),
      XDG_CONFIG_HOME: join(root, "config"),
      ABHED_MANAGED_CONFIG: join(root, "etc", "abhed.json")
    },
    marker: (name) => join(root, `marker-${name}`),
    managed: join(root, "etc", "abhed.json"),
    user: join(root, "config", "abhed", "abhed.json"),
    project: join(repo, ".abhed", "abhed.json")
  }
}

/** The extension `name`: appends its pid to $MARKER when it starts; denies every tool call, naming itself. */
export const markerScript = (name: string, version = 1) =>
  `#!/usr/bin/env bash
# version ${version}
echo "$$" >> "$MARKER"
while IFS= read -r line; do
  if [[ $line == *'"event":"tool_call"'* ]]; then echo '{"block":true,"reason":"${name} says no"}'; else echo '{}'; fi
done
`

/** The config entries of the extensions `names`, each running its `<name>.sh` beside the config file. */
export const markerExtensions = (w: World, names: ReadonlyArray<string>, extra: object = {}) =>
  names.map((name) => ({
    name,
    command: "bash",
    args: [`${name}.sh`],
    env: { MARKER: w.marker(name) },
    ...Patient,
    ...extra
  }))

/** The pids the extension `name` started with, in order. */
export const pidsOf = (w: World, name: string): ReadonlyArray<number> =>
  NodeFs.existsSync(w.marker(name)) ? NodeFs.readFileSync(w.marker(name), "utf8").trim().split("\n").map(Number) : []

/** The tool call every run sends. */
export const call = `{"event":"tool_call","tool":"bash","args":{"command":"ls"}}\n`
