import * as NodeFs from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"
import { Patient } from "../support/extension-helpers.ts"

/**
 * `abhed-ext list` without `--config`: the config layers of where it stands, with a temporary HOME. A project layer
 * that is not trusted is not started, and the listing says so, with what to run to trust it.
 */

const script = `#!/usr/bin/env bash
echo "$$" >> "$MARKER"
while IFS= read -r line; do echo '{}'; done
`

const setup = () => {
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync(join(tmpdir(), "abhed-list-trust-")))
  const repo = join(root, "repo")
  NodeFs.mkdirSync(join(repo, ".git"), { recursive: true })
  const env = {
    HOME: join(root, "home"),
    XDG_CONFIG_HOME: join(root, "config"),
    ABHED_MANAGED_CONFIG: join(root, "etc", "abhed.json")
  }
  const write = (file: string, name: string) => {
    NodeFs.mkdirSync(join(file, ".."), { recursive: true })
    NodeFs.writeFileSync(join(file, "..", `${name}.sh`), script)
    NodeFs.writeFileSync(
      file,
      JSON.stringify({
        extensions: [
          { name, command: "bash", args: [`${name}.sh`], env: { MARKER: join(root, `marker-${name}`) }, ...Patient }
        ]
      })
    )
  }
  write(join(root, "config", "abhed", "abhed.json"), "mine")
  write(join(repo, ".abhed", "abhed.json"), "proj")
  return { root, repo, env, project: join(repo, ".abhed", "abhed.json") }
}

describe("abhed-ext list over the config layers", () => {
  it("an untrusted project layer is reported with what to run, and none of it starts", async () => {
    const w = setup()
    const text = await runCli(["list"], { cwd: w.repo, env: w.env })
    expect(text.code).toBe(0)
    expect(text.stdout).toContain("mine  live")
    expect(text.stdout).not.toContain("proj  live")
    expect(text.stdout).toContain(`NOT TRUSTED: the project config ${w.project}: its extensions are not started (proj)`)
    expect(text.stdout).toContain(`review it and trust it with: abhed-ext trust ${w.repo}`)
    expect(NodeFs.existsSync(join(w.root, "marker-proj"))).toBe(false)

    const json = await runCli(["list", "--json"], { cwd: w.repo, env: w.env })
    const listing = JSON.parse(json.stdout)
    expect(listing.extensions.map((x: { name: string }) => x.name)).toEqual(["mine"])
    expect(listing.untrusted_project).toEqual({
      file: w.project,
      extensions: ["proj"],
      changes: ["this project's config has never been trusted"],
      trust: `abhed-ext trust ${w.repo}`
    })

    expect((await runCli(["trust", "--yes"], { cwd: w.repo, env: w.env })).code).toBe(0)
    const trusted = JSON.parse((await runCli(["list", "--json"], { cwd: w.repo, env: w.env })).stdout)
    expect(trusted.extensions.map((x: { name: string; state: string }) => [x.name, x.state])).toEqual([
      ["mine", "live"],
      ["proj", "live"]
    ])
    expect(trusted.untrusted_project).toBeNull()
  }, 120_000)
})
