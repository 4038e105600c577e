import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { type Manifest, preflightProblem, satisfies } from "@abhed/cli/Preflight"
import { describe, expect, it } from "vitest"
import { jsonLines, repoRoot, runProcess } from "../support/cli-helpers.ts"

/**
 * Installing and starting `abhed-ext`: the startup check of the published bin (Preflight.ts) on package trees laid
 * out as npm lays them, and the workspace's own ways in (`pnpm abhed-ext` from a subfolder, `pnpm exec abhed-ext`).
 * The check on a real Node 20 and a real npm install is in the pack test (test/pack/run.sh).
 */

const cli: Manifest = {
  version: "0.1.0",
  engines: { node: ">=24" },
  peerDependencies: { effect: "^4.1.0", "@effect/platform-node": "^4.1.0" }
}

/** An npm-style tree: node_modules/{@abhed/cli, effect, @effect/platform-node[, nested effect]}. */
const tree = (versions: { readonly effect?: string; readonly platform?: string; readonly nestedEffect?: string }) => {
  const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-preflight-"))
  const write = (dir: string, manifest: object) => {
    NodeFs.mkdirSync(NodePath.join(root, dir), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(root, dir, "package.json"), JSON.stringify(manifest))
  }
  write("node_modules/@abhed/cli", { name: "@abhed/cli", ...cli })
  if (versions.effect !== undefined) write("node_modules/effect", { name: "effect", version: versions.effect })
  if (versions.platform !== undefined) {
    write("node_modules/@effect/platform-node", {
      name: "@effect/platform-node",
      version: versions.platform,
      peerDependencies: { effect: `^${versions.platform}` }
    })
  }
  if (versions.nestedEffect !== undefined) {
    write("node_modules/@effect/platform-node/node_modules/effect", { name: "effect", version: versions.nestedEffect })
  }
  return NodePath.join(root, "node_modules/@abhed/cli")
}

describe("the published bin's startup check", () => {
  it("passes a Node 24 with effect and @effect/platform-node of one release", () => {
    expect(
      preflightProblem({ node: "24.1.0", manifest: cli, packageDir: tree({ effect: "4.1.0", platform: "4.1.0" }) })
    ).toBeUndefined()
    expect(
      preflightProblem({ node: "25.0.0", manifest: cli, packageDir: tree({ effect: "4.2.3", platform: "4.2.0" }) })
    ).toBeUndefined()
  })

  it("names the Node and how to get Node 24 on Node 20", () => {
    const problem = preflightProblem({
      node: "20.20.2",
      manifest: cli,
      packageDir: tree({ effect: "4.1.0", platform: "4.1.0" })
    })
    expect(problem).toBe(
      "abhed-ext: needs Node >=24 (this is Node 20.20.2): install Node 24, or in this project `npm install node@24` " +
        'and run `npx abhed-ext` (README, "From the registry")'
    )
  })

  it("the issue's install: effect 4.1.0 beside @effect/platform-node 4.0.6 (what npm picked on Node 20)", () => {
    const problem = preflightProblem({
      node: "24.0.0",
      manifest: cli,
      packageDir: tree({ effect: "4.1.0", platform: "4.0.6" })
    })
    expect(problem).toBe(
      "abhed-ext: needs effect ^4.1.0 with @effect/platform-node ^4.1.0, found effect 4.1.0 and " +
        "@effect/platform-node 4.0.6: run `npm install effect@4.1.0 @effect/platform-node@4.1.0` (with -g for a global abhed-ext)"
    )
  })

  it("a second copy of effect under @effect/platform-node", () => {
    const problem = preflightProblem({
      node: "24.0.0",
      manifest: cli,
      packageDir: tree({ effect: "4.1.0", platform: "4.1.0", nestedEffect: "4.1.0" })
    })
    expect(problem).toContain("(and a second effect, 4.1.0, under @effect/platform-node)")
  })

  it("a missing peer", () => {
    expect(preflightProblem({ node: "24.0.0", manifest: cli, packageDir: tree({ effect: "4.1.0" }) })).toBe(
      "abhed-ext: @effect/platform-node not installed beside @abhed/cli: run " +
        "`npm install effect@4.1.0 @effect/platform-node@4.1.0` (with -g for a global abhed-ext)"
    )
    expect(preflightProblem({ node: "24.0.0", manifest: cli, packageDir: tree({}) })).toContain(
      "abhed-ext: effect and @effect/platform-node not installed"
    )
  })

  it("ranges", () => {
    expect(satisfies("4.1.0", "^4.1.0")).toBe(true)
    expect(satisfies("4.9.1", "^4.1.0")).toBe(true)
    expect(satisfies("4.0.6", "^4.1.0")).toBe(false)
    expect(satisfies("5.0.0", "^4.1.0")).toBe(false)
    expect(satisfies("0.3.1", "^0.3.0")).toBe(true)
    expect(satisfies("0.4.0", "^0.3.0")).toBe(false)
    expect(satisfies("24.0.0", ">=24")).toBe(true)
    expect(satisfies("v22.19.0", ">=24")).toBe(false)
    expect(satisfies("4.1.0", "4.1.0")).toBe(true)
    expect(satisfies("4.1.1", "4.1.0")).toBe(false)
    // A range this check does not read never stops a working install.
    expect(satisfies("4.0.0", ">=4.1.0 <5 || 6")).toBe(true)
  })
})

/** `pnpm [args]` in `cwd`, with this Node's folder first on PATH (as the workspace's scripts have it). */
const pnpm = (args: ReadonlyArray<string>, cwd: string, input: string) =>
  runProcess("pnpm", args, {
    cwd,
    input,
    env: { PATH: `${NodePath.dirname(process.execPath)}${NodePath.delimiter}${process.env["PATH"] ?? ""}` }
  })

describe.concurrent("abhed-ext from anywhere in the workspace", () => {
  // cli-guard.json is in test/fixtures: found only when `-c` resolves against where the user stands.
  const here = NodePath.join(repoRoot, "test", "fixtures")
  const secret = `{"event":"tool_call","tool":"read","args":{"path":"my secret.txt"}}\n`
  const denied = {
    event: "tool_call",
    decision: "deny",
    reasons: [{ extension: "guard", reason: "secrets are off limits" }]
  }

  it("pnpm abhed-ext from a subfolder resolves paths against that subfolder", async () => {
    const r = await pnpm(["-s", "abhed-ext", "run", "-c", "cli-guard.json"], here, secret)
    expect(jsonLines(r.stdout)).toEqual([expect.objectContaining(denied)])
    expect(r.code).toBe(0)
  })

  it("pnpm exec abhed-ext runs the workspace's CLI, in the current folder", async () => {
    const r = await pnpm(["exec", "abhed-ext", "run", "-c", "cli-guard.json"], here, secret)
    expect(jsonLines(r.stdout)).toEqual([expect.objectContaining(denied)])
    expect(r.code).toBe(0)
  })
})
