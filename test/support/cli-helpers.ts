import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

/** Runs the CLI as a user would (`node packages/cli/src/bin.ts …`), with this Node (24, from the workspace). */

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
/** The CLI's source bundled once for the run (cli-bundle.ts; `ABHED_TEST_CLI=source`: the source itself). */
export const bin =
  process.env["ABHED_TEST_CLI_BIN"] ?? fileURLToPath(new URL("../../packages/cli/src/bin.ts", import.meta.url))

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface RunOptions {
  /** Written to stdin, which is then closed (empty by default). */
  readonly input?: string
  readonly cwd?: string
  /** Added to this process's environment. */
  readonly env?: NodeJS.ProcessEnv
}

export const runCli = (args: ReadonlyArray<string>, options: RunOptions = {}): Promise<CliResult> =>
  runProcess(process.execPath, [bin, ...args], options)

/** Runs any program to its end and collects what it wrote (the CLI, pnpm, an example program). */
export const runProcess = (
  command: string,
  args: ReadonlyArray<string>,
  options: RunOptions = {}
): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, {
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
  stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l))

/** A CLI run driven line by line: write input, wait for what it prints, end the input. */
export interface LiveCli {
  readonly write: (text: string) => void
  readonly end: () => void
  /** Resolves once everything printed so far on stdout (or stderr) satisfies `ready`. */
  readonly stdout: (ready: (text: string) => boolean) => Promise<string>
  readonly stderr: (ready: (text: string) => boolean) => Promise<string>
  readonly done: Promise<CliResult>
}

export const startCli = (
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {}
): LiveCli => {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: { ...process.env, ...options.env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  const out = { stdout: "", stderr: "" }
  const waiting: Array<() => void> = []
  const wake = () => waiting.splice(0).forEach((f) => f())
  child.stdout.setEncoding("utf8").on("data", (d: string) => ((out.stdout += d), wake()))
  child.stderr.setEncoding("utf8").on("data", (d: string) => ((out.stderr += d), wake()))
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code) => {
      resolve({ code, ...out })
      wake()
    })
  })
  const until =
    (which: "stdout" | "stderr") =>
    (ready: (text: string) => boolean): Promise<string> =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (ready(out[which])) resolve(out[which])
          else if (child.exitCode !== null || child.signalCode !== null) {
            reject(
              new Error(
                `the CLI ended (${child.exitCode ?? child.signalCode}) before its ${which} was ready:\n${out.stderr}`
              )
            )
          } else waiting.push(check)
        }
        check()
      })
  return {
    write: (text) => child.stdin.write(text),
    end: () => child.stdin.end(),
    stdout: until("stdout"),
    stderr: until("stderr"),
    done
  }
}
