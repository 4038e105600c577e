import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { beforeAll, describe, expect, it } from "vitest"
import { recordSession } from "../support/audit-session.ts"
import { runCli } from "../support/cli-helpers.ts"

/**
 * `abhed-ext audit`: a session recorded by a real `run --audit` (a dead extension, an ignored allow, a rewrite over
 * two rounds, the policy's rules), shown as the demo shows a line, filtered, passed through (`--json`); bad lines
 * named file:line while the other records are still shown; hostile text escaped.
 */

let recorded: Awaited<ReturnType<typeof recordSession>>

beforeAll(async () => {
  recorded = await recordSession()
})

/** The blocks of the text output, one per record, by their first line. */
const blocks = (stdout: string): Array<string> => stdout.split("\n\n").filter((b) => b.startsWith("── "))
const blockOf = (stdout: string, head: string): string => {
  const found = blocks(stdout).filter((b) => b.startsWith(`── ${head}`))
  expect(found, `one block for ${head} in:\n${stdout}`).toHaveLength(1)
  return found[0] ?? ""
}

describe("abhed-ext audit", () => {
  it("shows every record as the demo shows a line: each extension's reply per round, deaths, ignored allows, notes, the decision, timings", async () => {
    const r = await runCli(["audit", recorded.file])
    expect(r.code, r.stderr).toBe(0)
    expect(blocks(r.stdout)).toHaveLength(recorded.lines.length)
    expect(r.stdout).toContain(`${recorded.lines.length} of ${recorded.lines.length} records shown`)
    expect(r.stdout).not.toContain("\u001b[")

    const c1 = blockOf(r.stdout, "c-1 tool_call")
    expect(c1).toMatch(
      /── c-1 tool_call bash \{"command":"ls"\} +\(session abhed-ext, seq \d+, \S+; .*audit\.jsonl:\d+\)/
    )
    // The death, with the cause the extension wrote on its stderr (--audit-content full keeps it).
    expect(c1).toMatch(
      /crasher +\d+(\.\d)? ms +EXITED: exited \(code 3\); its stderr: fatal: cannot open rules database/
    )
    expect(c1).toMatch(
      /allower +\d+(\.\d)? ms +"fine by me" \(an allow: ignored, an extension may veto, never permit\)/
    )
    expect(c1).toMatch(/→ ALLOW after 1 round; \d+(\.\d)? ms in all/)

    const c2 = blockOf(r.stdout, "c-2 tool_call")
    expect(c2).toMatch(
      /round 1\n[\s\S]*rewriter +\d+(\.\d)? ms +rewrite args → \{"command":"rm -rf \.\/build"\}[\s\S]*round 2\n/
    )
    expect(c2).toMatch(/crasher +\d+(\.\d)? ms +DEAD: exited \(code 3\)/)
    expect(c2).toContain("note: policy: allow (rule:allow[1])")
    expect(c2).toMatch(/→ ALLOW after 2 rounds; args rewritten to \{"command":"rm -rf \.\/build"\} by rewriter; /)

    expect(blockOf(r.stdout, "c-5 tool_call")).toMatch(
      /note: policy: deny \(rule:deny\[0\]\)[\s\S]*→ DENY \(policy: no network\)/
    )
    expect(blockOf(r.stdout, "c-6 tool_call")).toMatch(/note: policy: ask \(default\)[\s\S]*→ ASK \(policy: default\)/)
    expect(blockOf(r.stdout, "session_start")).toContain("(no extension subscribes to this event)")
  })

  it("answers why c-3 was denied, and by whom, and why c-4 was not, in one command", async () => {
    const r = await runCli(["audit", recorded.file, "--call", "c-3", "--call", "c-4"])
    expect(r.code, r.stderr).toBe(0)
    expect(blocks(r.stdout).map((b) => b.split(" ").slice(1, 3).join(" "))).toEqual([
      "c-3 tool_call",
      "c-4 tool_call",
      "c-4 tool_result"
    ])
    const c3 = blockOf(r.stdout, "c-3 tool_call")
    expect(c3).toMatch(/guard +\d+(\.\d)? ms +BLOCK "secrets are off limits"/)
    expect(c3).toContain("note: policy: allow (rule:allow[0])")
    expect(c3).toMatch(/→ DENY \(guard: secrets are off limits\) after 1 round/)
    const c4 = blockOf(r.stdout, "c-4 tool_call")
    expect(c4).toMatch(/guard +\d+(\.\d)? ms +no opinion/)
    expect(c4).toContain("note: policy: allow (rule:allow[0])")
    expect(c4).toMatch(/→ ALLOW after 1 round/)
    expect(r.stdout).toContain(`3 of ${recorded.lines.length} records shown`)
  })

  it("--decision and --extension choose the records: values of one flag are alternatives, flags all apply", async () => {
    const heads = async (...args: Array<string>) => {
      const r = await runCli(["audit", recorded.file, ...args])
      expect(r.code, r.stderr).toBe(0)
      return blocks(r.stdout).map((b) => b.split(" ")[1])
    }
    expect(await heads("--decision", "deny")).toEqual(["c-3", "c-5"])
    expect(await heads("--decision", "deny", "--decision", "ask")).toEqual(["c-3", "c-5", "c-6"])
    expect(await heads("--decision", "allow", "--call", "c-3")).toEqual([])
    // Asked: every tool call (a dead extension too: it is still sent nothing, but shown failing); not the rest.
    expect(await heads("--extension", "crasher")).toEqual(["c-1", "c-2", "c-3", "c-4", "c-5", "c-6"])
    expect(await heads("--extension", "nobody")).toEqual([])
  })

  it("--json prints the matching lines exactly as they are in the file", async () => {
    const r = await runCli(["audit", recorded.file, "--json", "--decision", "deny"])
    expect(r.code, r.stderr).toBe(0)
    const expected = recorded.lines.filter(
      (line) => /"call_id":"c-[35]","tool"/.test(line) && line.includes('"event":"tool_call"')
    )
    expect(expected).toHaveLength(2)
    expect(r.stdout).toBe(expected.map((line) => `${line}\n`).join(""))
    const all = await runCli(["audit", recorded.file, "--json"])
    expect(all.stdout).toBe(recorded.lines.map((line) => `${line}\n`).join(""))
  })

  it("names each bad line file:line and why, still shows the other records, and exits 1", async () => {
    const bad = join(recorded.dir, "bad.jsonl")
    const [first, second] = recorded.lines
    writeFileSync(bad, [first, "{not json", '{"seq":"x"}', "", second].join("\n") + "\n")
    const missing = join(recorded.dir, "missing.jsonl")
    const r = await runCli(["audit", bad, missing, recorded.file, "--json"])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${bad}:2: not JSON (`)
    // Every problem by its field, in the words of config errors (was effect's raw `Expected number at ["seq"]`).
    expect(r.stderr).toContain(`${bad}:3: not an audit record: seq: must be a number, got "x"; session_id: missing;`)
    expect(r.stderr).toContain(`cannot read ${missing}`)
    expect(r.stderr).toContain(
      "abhed-ext audit: 2 line(s) that are not audit records were skipped; 1 file(s) could not be read"
    )
    expect(r.stdout).toBe([first, second, ...recorded.lines].map((line) => `${line}\n`).join(""))
  })

  it("shows a record's text escaped: no terminal control sequence or bidirectional override gets through", async () => {
    const hostile = "\u001b]0;owned\u0007\u001b[2J\u009b31m\u202eevil\r"
    const record = {
      seq: 0,
      session_id: `s${hostile}`,
      time: `t${hostile}`,
      event: "tool_call",
      call_id: `c${hostile}`,
      tool: `bash${hostile}`,
      args: { command: `ls${hostile}` },
      rounds: [
        {
          round: 1,
          exchanges: [
            {
              extension: `guard${hostile}`,
              status: "replied",
              latency_ms: 1,
              reply: { block: true, reason: `no${hostile}` },
              ignored: [`keep${hostile}`]
            },
            { extension: "dead", status: "exited", latency_ms: 1, error: `gone${hostile}`, stderr: `trace${hostile}` },
            { extension: "other", status: `weird${hostile}`, latency_ms: 1 }
          ]
        }
      ],
      outcome: {
        decision: "deny",
        reasons: [{ extension: `guard${hostile}`, reason: `no${hostile}` }],
        args: { command: `x${hostile}` },
        rounds: 1,
        rewrittenBy: [`r${hostile}`]
      },
      notes: [`policy: ${hostile}`],
      duration_ms: 1
    }
    const file = join(recorded.dir, `hostile${hostile.replace(/[\u0000-\u001f/]/g, "")}.jsonl`)
    writeFileSync(file, `${JSON.stringify(record)}\n{"bad":"${"\\u001b"}]0;x\\u0007"}\n`)
    const r = await runCli(["audit", file])
    expect(r.code).toBe(1)
    for (const out of [r.stdout, r.stderr]) {
      expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/)
    }
    expect(r.stdout).toContain("\\x1b]0;owned\\x07\\x1b[2J\\u009b31m\\u202eevil\\x0d")
    expect(r.stdout).toMatch(/── c\\x1b.*tool_call bash\\x1b/)
    expect(r.stdout).toMatch(/guard\\x1b.* BLOCK "no\\u001b/)
    expect(r.stdout).toContain("gone\\x1b]0;owned")
    expect(r.stdout).toContain("its stderr: trace\\x1b]0;owned")
  })

  it("refuses --json with --html, and no file at all (exit 64)", async () => {
    const both = await runCli(["audit", recorded.file, "--json", "--html", join(recorded.dir, "r.html")])
    expect(both.code).toBe(64)
    expect(both.stderr).toContain("--json and --html: give one")
    const none = await runCli(["audit"])
    expect(none.code).toBe(64)
  })
})

describe("abhed-ext audit --html", () => {
  it("writes the matching records, and only them, into one page readable by its owner only", async () => {
    const out = join(recorded.dir, "denied.html")
    const r = await runCli(["audit", recorded.file, "--decision", "deny", "--html", out])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain(`${out}: 2 of ${recorded.lines.length} records`)
    expect(statSync(out).mode & 0o777).toBe(0o600)
    const html = readFileSync(out, "utf8")
    // The records' lines, gzipped in chunks (one base64 line each), unpacked by the page only for a drill-down.
    const packed = /<script type="application\/gzip\+base64" id="audit-records">([^<]*)<\/script>/.exec(html)?.[1] ?? ""
    const records = packed
      .trim()
      .split("\n")
      .flatMap((chunk) =>
        gunzipSync(Buffer.from(chunk, "base64"))
          .toString("utf8")
          .split("\n")
          .map((line) => JSON.parse(line) as { call_id: string })
      )
    expect(records.map((x) => x.call_id)).toEqual(["c-3", "c-5"])
    // Nothing the page would fetch: no URL, no external script or style.
    expect(html).not.toMatch(/\b(src|href)=|https?:\/\/|@import|url\(/i)
  })
})
