import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { bin, type CliResult, jsonLines, repoRoot, runCli } from "../support/cli-helpers.ts"
import { fixture } from "../support/extension-helpers.ts"

/**
 * stderr's lines but the warning every run of a config without extensions gives (these tests are about files, and
 * use such configs): what else the CLI said.
 */
const said = (stderr: string): Array<string> =>
  stderr.split("\n").filter((line) => line.trim() !== "" && !line.includes("configures no extensions"))

/**
 * The files the CLI is given (issues 21.4, 22.4, 22.8, 22.11, 24.3), with real FIFOs, symbolic links and process
 * substitutions: events stream from whatever they are; a config, an audit file or a settings file that is not a
 * regular file is refused at once (before, a FIFO hung the CLI, and SIGTERM could not end it); a symlinked config
 * resolves its relative paths against the real file; `--audit` follows no symbolic link and appends to no one
 * else's file.
 */

const started: Array<ChildProcess> = []
afterAll(() => {
  // A test that failed by hanging must not leave its CLI behind.
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
})

/** Longer than a loaded machine needs to start the CLI and answer; a hang (the bug) ends here, as a failure. */
const HangMillis = 240_000

const temp = () => mkdtempSync(join(tmpdir(), "abhed-files-"))
const fifo = (dir: string, name: string) => {
  const path = join(dir, name)
  execFileSync("mkfifo", [path])
  return path
}

/** The CLI with stdin closed after `input`; killed after HangMillis (code null): a hang fails the test, it does not stall it. */
const start = (args: ReadonlyArray<string>, options: { readonly input?: string; readonly cwd?: string } = {}) => {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? repoRoot,
    stdio: ["pipe", "pipe", "pipe"]
  })
  started.push(child)
  let stdout = ""
  let stderr = ""
  child.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d))
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  child.stdin?.end(options.input ?? "")
  const bound = setTimeout(() => child.kill("SIGKILL"), HangMillis)
  const result = new Promise<CliResult>((resolve) =>
    child.on("close", (code) => {
      clearTimeout(bound)
      resolve({ code, stdout, stderr })
    })
  )
  return { child, result }
}

/** Whether `pid` holds a descriptor open on `path` (Linux /proc): the CLI has opened it. */
const holds = (pid: number, path: string): boolean => {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === path
      } catch {
        return false
      }
    })
  } catch {
    return false
  }
}

const until = async (condition: () => boolean): Promise<void> => {
  const deadline = Date.now() + HangMillis
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition never held")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const noExtensions = (dir: string) => {
  const file = join(dir, "abhed.json")
  writeFileSync(file, `{"extensions": []}`)
  return file
}

const call = `{"event":"tool_call","tool":"bash","args":{"command":"ls"}}\n`

describe.concurrent("abhed-ext run: events from a FIFO or a process substitution (issue 21.4)", () => {
  it(
    "a FIFO whose writer comes after the CLI opened it: every line decided, exit 0",
    async () => {
      const dir = temp()
      const events = fifo(dir, "events.jsonl")
      const { child, result } = start(["run", "-c", noExtensions(dir), events])
      // The CLI opens it first (a blocking open would wait for this writer in a thread): then the writer comes.
      await until(() => holds(child.pid ?? 0, events))
      writeFileSync(events, call + call)
      const r = await result
      expect(said(r.stderr)).toEqual([])
      expect(r.code).toBe(0)
      expect(jsonLines(r.stdout)).toEqual(
        [0, 1].map(() => expect.objectContaining({ event: "tool_call", decision: "allow" }))
      )
    },
    2 * HangMillis
  )

  it(
    "a process substitution, <(cat events.jsonl): every line decided (before: cannot read /dev/fd/63: readAlloc)",
    async () => {
      const dir = temp()
      const events = join(dir, "events.jsonl")
      writeFileSync(events, call + call + call)
      const shell = spawn(
        "bash",
        ["-c", `exec "$0" "$1" run -c "$2" <(cat "$3")`, process.execPath, bin, noExtensions(dir), events],
        {
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      started.push(shell)
      let stdout = ""
      let stderr = ""
      shell.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
      shell.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
      const code = await new Promise<number | null>((resolve) => shell.on("close", resolve))
      expect(said(stderr)).toEqual([])
      expect(code).toBe(0)
      expect(jsonLines(stdout)).toHaveLength(3)
    },
    2 * HangMillis
  )

  it(
    "SIGTERM while the events FIFO has no writer yet ends the run with 130 (nothing waits in a thread)",
    async () => {
      const dir = temp()
      const events = fifo(dir, "events.jsonl")
      const { child, result } = start(["run", "-c", noExtensions(dir), events])
      await until(() => holds(child.pid ?? 0, events))
      child.kill("SIGTERM")
      expect((await result).code).toBe(130)
    },
    2 * HangMillis
  )
})

describe.concurrent("abhed-ext: a config, audit or settings path that is not a regular file is refused at once (issue 22.8)", () => {
  it(
    "-c FIFO: exit 2, one line naming it and saying what works (before: the CLI hung)",
    async () => {
      const dir = temp()
      const config = fifo(dir, "abhed.json")
      const r = await start(["run", "-c", config, "-"], { input: call }).result
      expect(r.code).toBe(2)
      expect(said(r.stderr)).toEqual([
        `${config}: cannot read the config file: is a FIFO (named pipe), not a regular file; give it as a file, or on stdin with -c -`
      ])
    },
    2 * HangMillis
  )

  it(
    "-c - still reads the config from stdin",
    async () => {
      const dir = temp()
      const events = join(dir, "events.jsonl")
      writeFileSync(events, call)
      const r = await start(["run", "-c", "-", events], { input: `{"extensions": []}` }).result
      expect(r.code).toBe(0)
      expect(jsonLines(r.stdout)).toEqual([expect.objectContaining({ decision: "allow" })])
    },
    2 * HangMillis
  )

  it(
    "--audit FIFO with no reader: exit 1, one line (before: the CLI hung)",
    async () => {
      const dir = temp()
      const audit = fifo(dir, "audit.jsonl")
      const r = await start(["run", "-c", noExtensions(dir), "--audit", audit], { input: call }).result
      expect(r.code).toBe(1)
      expect(r.stdout).toBe("")
      expect(said(r.stderr)).toEqual([`cannot write ${audit}: is a FIFO (named pipe) or a socket, not a regular file`])
    },
    2 * HangMillis
  )

  it(
    "--audit FIFO that someone reads: refused too, nothing written to it",
    async () => {
      const dir = temp()
      const audit = fifo(dir, "audit.jsonl")
      const reader = openSync(audit, constants.O_RDONLY | constants.O_NONBLOCK)
      try {
        const r = await start(["run", "-c", noExtensions(dir), "--audit", audit], { input: call }).result
        expect(r.code).toBe(1)
        expect(said(r.stderr)).toEqual([`cannot write ${audit}: is a FIFO (named pipe), not a regular file`])
      } finally {
        closeSync(reader)
      }
    },
    2 * HangMillis
  )

  it(
    "import-hooks FIFO: exit 1, one line saying what works (before: the CLI hung)",
    async () => {
      const dir = temp()
      const settings = fifo(dir, "settings.json")
      const r = await start(["import-hooks", settings]).result
      expect(r.code).toBe(1)
      expect(r.stdout).toBe("")
      expect(said(r.stderr)).toEqual([
        `cannot read ${settings}: is a FIFO (named pipe), not a regular file; give it as a file, or on stdin with -`
      ])
    },
    2 * HangMillis
  )
})

describe.concurrent("abhed-ext import-hooks - (issue 24.3)", () => {
  it(
    "reads the settings from stdin, as every command reads -",
    async () => {
      const settings = readFileSync(join(repoRoot, "test/fixtures/hooks/project/.claude/settings.json"), "utf8")
      const fromFile = await runCli(["import-hooks", "test/fixtures/hooks/project/.claude/settings.json"])
      const fromStdin = await runCli(["import-hooks", "-"], {
        input: settings,
        cwd: join(repoRoot, "test/fixtures/hooks/project")
      })
      expect(fromStdin.code).toBe(0)
      // The same hooks, with the current folder as the project (a file's project is the folder above .claude/).
      const hooks = (stdout: string) =>
        (JSON.parse(stdout) as { extensions: ReadonlyArray<{ name: string }> }).extensions.map((x) => x.name)
      expect(hooks(fromStdin.stdout)).toEqual(hooks(fromFile.stdout))
      expect(hooks(fromStdin.stdout).length).toBeGreaterThan(0)
    },
    2 * HangMillis
  )
})

describe.concurrent("abhed-ext run -c LINK: relative paths resolve against the real file (issue 22.4)", () => {
  it(
    "a guard started by a relative path still denies when the config is reached through a symbolic link",
    async () => {
      const dir = temp()
      mkdirSync(join(dir, "real"))
      mkdirSync(join(dir, "link"))
      writeFileSync(join(dir, "real", "guard.sh"), readFileSync(fixture("host-rm-guard.sh")))
      writeFileSync(
        join(dir, "real", "abhed.json"),
        JSON.stringify({ extensions: [{ name: "guard", command: "bash", args: ["guard.sh"], events: ["tool_call"] }] })
      )
      symlinkSync(join(dir, "real", "abhed.json"), join(dir, "link", "abhed.json"))
      const rm = `{"event":"tool_call","tool":"bash","args":{"command":"rm -rf /"}}\n`
      const direct = await runCli(["run", "-c", join(dir, "real", "abhed.json")], { input: rm })
      const linked = await runCli(["run", "-c", join(dir, "link", "abhed.json")], { input: rm })
      expect(jsonLines(direct.stdout)).toEqual([expect.objectContaining({ decision: "deny" })])
      // Before: guard.sh was looked for in link/, the guard died at spawn, and the call was allowed.
      expect(jsonLines(linked.stdout)).toEqual([expect.objectContaining({ decision: "deny" })])
      expect(linked.stderr).not.toContain("dead")
    },
    2 * HangMillis
  )
})

describe.concurrent("abhed-ext run --audit: no symbolic link, no one else's file, a new file 0600 (issue 22.11)", () => {
  it(
    "a symbolic link is refused (exit 1) and its target is not written",
    async () => {
      const dir = temp()
      const target = join(dir, "target")
      writeFileSync(target, "")
      const link = join(dir, "audit.jsonl")
      symlinkSync(target, link)
      const r = await runCli(["run", "-c", noExtensions(dir), "--audit", link], { input: call })
      expect(r.code).toBe(1)
      expect(said(r.stderr)).toEqual([
        `cannot write ${link}: is a symbolic link: it is opened without following links; give the real file`
      ])
      expect(readFileSync(target, "utf8")).toBe("")
    },
    2 * HangMillis
  )

  it(
    "a dangling symbolic link is refused and creates nothing where it points",
    async () => {
      const dir = temp()
      const target = join(dir, "created-by-the-link")
      const link = join(dir, "audit.jsonl")
      symlinkSync(target, link)
      const r = await runCli(["run", "-c", noExtensions(dir), "--audit", link], { input: call })
      expect(r.code).toBe(1)
      expect(existsSync(target)).toBe(false)
    },
    2 * HangMillis
  )

  it(
    "a file owned by another user is refused (exit 1) and left as it was",
    async () => {
      // The tests run as root here: a file of uid 65534 (nobody) is someone else's, even for root.
      const dir = temp()
      const audit = join(dir, "audit.jsonl")
      writeFileSync(audit, "")
      chmodSync(audit, 0o666)
      chownSync(audit, 65534, 65534)
      const r = await runCli(["run", "-c", noExtensions(dir), "--audit", audit], { input: call })
      expect(r.code).toBe(1)
      expect(said(r.stderr)).toEqual([
        `cannot write ${audit}: is owned by another user (uid 65534, this process runs as uid ${process.getuid?.()}): refusing to append to it`
      ])
      expect(readFileSync(audit, "utf8")).toBe("")
    },
    2 * HangMillis
  )

  it(
    "a new file is created 0600 whatever the umask",
    async () => {
      const dir = temp()
      const audit = join(dir, "audit.jsonl")
      const shell = spawn(
        "bash",
        ["-c", `umask 000; exec "$0" "$1" run -c "$2" --audit "$3"`, process.execPath, bin, noExtensions(dir), audit],
        {
          stdio: ["pipe", "ignore", "inherit"]
        }
      )
      started.push(shell)
      shell.stdin.end(call)
      expect(await new Promise((resolve) => shell.on("close", resolve))).toBe(0)
      expect(statSync(audit).mode & 0o777).toBe(0o600)
      expect(readFileSync(audit, "utf8")).toContain(`"event":"tool_call"`)
    },
    2 * HangMillis
  )
})
