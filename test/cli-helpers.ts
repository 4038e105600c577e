import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

/** Runs the CLI as a user would (`node packages/cli/src/bin.ts …`), with this Node (24, from the workspace). */

export const repoRoot = fileURLToPath(new URL("..", import.meta.url))
export const bin = fileURLToPath(new URL("../packages/cli/src/bin.ts", import.meta.url))

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runCli = (
  args: ReadonlyArray<string>,
  options: { readonly input?: string; readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {}
): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })

/** Non-empty stdout lines parsed as JSON. */
export const jsonLines = (stdout: string): Array<unknown> =>
  stdout.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l))
