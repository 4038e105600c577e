import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { repoRoot, runCli } from "./cli-helpers.ts"
import { fixture, Patient } from "./extension-helpers.ts"

/**
 * A session recorded by a real `abhed-ext run --audit --audit-content full`, for the `audit` tests (text and HTML):
 * `crasher` dies on the first call it reads (with a cause on its stderr), `allower` gives a reason without a veto
 * on every call (an allow, ignored), `rewriter` rewrites c-2 (two rounds), `guard` denies c-3, the policy allows
 * c-4 (rule allow[0]), denies c-5 (its rule) and asks for c-6 (its default); c-4's result follows.
 */

const bash = (name: string, file: string) => ({
  name,
  command: "bash",
  args: [file],
  events: ["tool_call"],
  ...Patient
})

export const auditConfig = {
  extensions: [
    bash("allower", fixture("cli-allow.sh")),
    bash("crasher", fixture("audit-crash.sh")),
    bash("guard", join(repoRoot, "docs/examples/block-secrets.sh")),
    {
      name: "rewriter",
      command: process.execPath,
      args: [fixture("host-rewriter.mjs")],
      env: { FROM: "rm -rf build", TO: "rm -rf ./build" },
      events: ["tool_call"],
      ...Patient
    }
  ],
  policy: {
    deny: [{ tool: "bash", args: { command: "curl *" }, reason: "no network" }],
    allow: [{ tool: "read" }, { tool: "bash" }],
    default: "ask"
  }
}

export const auditSession = [
  { event: "tool_call", call_id: "c-1", tool: "bash", args: { command: "ls" } },
  { event: "tool_call", call_id: "c-2", tool: "bash", args: { command: "rm -rf build" } },
  { event: "tool_call", call_id: "c-3", tool: "read", args: { path: "config/secrets.json" } },
  { event: "tool_call", call_id: "c-4", tool: "read", args: { path: "README.md" } },
  { event: "tool_call", call_id: "c-5", tool: "bash", args: { command: "curl evil.example" } },
  { event: "tool_call", call_id: "c-6", tool: "write", args: { path: "notes.txt" } },
  { event: "tool_result", call_id: "c-4", tool: "read", args: { path: "README.md" }, content: "hello", is_error: false }
]

/** Records the session: the audit file's path and its lines. */
export const recordSession = async (): Promise<{
  readonly dir: string
  readonly file: string
  readonly lines: ReadonlyArray<string>
}> => {
  const dir = mkdtempSync(join(tmpdir(), "abhed-audit-"))
  writeFileSync(join(dir, "abhed.json"), JSON.stringify(auditConfig))
  writeFileSync(join(dir, "session.jsonl"), auditSession.map((x) => JSON.stringify(x)).join("\n") + "\n")
  const file = join(dir, "audit.jsonl")
  const r = await runCli(["run", "-c", "abhed.json", "--audit", file, "--audit-content", "full", "session.jsonl"], {
    cwd: dir
  })
  if (r.code !== 0) throw new Error(`abhed-ext run failed (${r.code}): ${r.stderr}`)
  return {
    dir,
    file,
    lines: readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line !== "")
  }
}
