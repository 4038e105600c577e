import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { recordSession } from "../support/audit-session.ts"
import { runCli } from "../support/cli-helpers.ts"
import { within } from "../support/extension-helpers.ts"

/**
 * `abhed-ext audit --html` in a real browser: the distribution's Chromium (/usr/bin/chromium, Debian's `chromium`
 * package) driven by playwright-core. The page must load with no console error and no request but its own file,
 * show every record and the drill-down of one, keep hostile records inert (no `</script>` breakout, no markup from a
 * record), and render 100k records within seconds.
 */

const ChromiumPath = "/usr/bin/chromium"

let browser: BrowserContext | undefined
let recorded: Awaited<ReturnType<typeof recordSession>>

const Missing = `${ChromiumPath} is missing: install the distribution's Chromium (apt-get install chromium) to run the HTML report's tests`

/**
 * The browser, or the failure of the test that needs it: without Chromium every test here fails (not skipped), each
 * saying what to install, since a machine without it cannot vouch for the page.
 */
const context = (): BrowserContext => {
  if (browser === undefined) throw new Error(Missing)
  return browser
}

beforeAll(async () => {
  recorded = await recordSession()
  if (!existsSync(ChromiumPath)) return
  browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "abhed-chromium-")), {
    executablePath: ChromiumPath,
    headless: true,
    viewport: { width: 1300, height: 900 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
}, 120_000)

afterAll(async () => {
  await browser?.close()
})

interface Opened {
  readonly page: Page
  /** Console errors and uncaught exceptions. */
  readonly errors: Array<string>
  /** Every request but the page's own file. */
  readonly requests: Array<string>
  readonly dialogs: Array<string>
  /** From the navigation's start to the page saying it is drawn. */
  readonly millis: number
  /** The longest task the page's thread ran so far (ms): how long the page froze at worst. */
  readonly longestTask: () => Promise<number>
}

type Watched = { longestTask?: number }

const open = async (file: string, timeout = 60_000): Promise<Opened> => {
  const page = await context().newPage()
  const url = pathToFileURL(file).href
  const errors: Array<string> = []
  const requests: Array<string> = []
  const dialogs: Array<string> = []
  page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())))
  page.on("pageerror", (e) => void errors.push(e.message))
  page.on("request", (r) => void (r.url() !== url && requests.push(r.url())))
  page.on("dialog", (d) => {
    dialogs.push(d.message())
    void d.dismiss()
  })
  // Node's types know no "longtask" (a browser's entry type): the observer runs in the page.
  await page.addInitScript(() => {
    const watched = globalThis as Watched
    watched.longestTask = 0
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) watched.longestTask = Math.max(watched.longestTask ?? 0, entry.duration)
    }).observe({ type: "longtask" as "mark", buffered: true })
  })
  const started = Date.now()
  await page.goto(url, { timeout })
  await page.waitForSelector("html[data-ready='1']", { state: "attached", timeout })
  const millis = Date.now() - started
  const longestTask = () => page.evaluate(() => Math.round((globalThis as Watched).longestTask ?? -1))
  return { page, errors, requests, dialogs, millis, longestTask }
}

/** Clicks a row and waits for its record's drill-down (the page unpacks the record at the click). */
const drillInto = async (page: Page, row: ReturnType<Page["locator"]>): Promise<string> => {
  const record = await row.getAttribute("data-record")
  await row.click()
  await page.waitForSelector(`#drill[data-record='${record}']`, { state: "attached" })
  return (await page.locator("#drill").textContent()) ?? ""
}

const report = async (audit: string, code = 0): Promise<string> => {
  const out = join(mkdtempSync(join(tmpdir(), "abhed-report-")), "report.html")
  const r = await runCli(["audit", audit, "--html", out])
  expect(r.code, r.stderr).toBe(code)
  return out
}

describe("abhed-ext audit --html", () => {
  it("loads with no console error and no request, shows every record, and the drill-down of one", async () => {
    context() // fails at once without the browser
    const file = await report(recorded.file)
    const { dialogs, errors, page, requests } = await open(file)
    expect(errors).toEqual([])
    expect(requests).toEqual([])
    expect(dialogs).toEqual([])
    const rows = page.locator("#calls tbody tr")
    expect(await rows.count()).toBe(recorded.lines.length)
    const calls = await page.locator("#calls tbody tr td:nth-child(4)").allTextContents()
    expect(calls.filter((c) => c !== "")).toEqual(["c-1", "c-2", "c-3", "c-4", "c-5", "c-6", "c-4"])
    expect(await page.locator("#summary").textContent()).toContain("6 tool calls (2 denied, 1 asked, 3 allowed)")

    // Deaths with their cause; latency per extension; who denied what.
    const deaths = await page.locator("#deaths").textContent()
    expect(deaths).toContain("crasher")
    expect(deaths).toContain("fatal: cannot open rules database /var/lib/guard/rules.db")
    const guardRow = await page.locator("#latency tr", { hasText: "guard" }).locator("td").allTextContents()
    expect(guardRow.slice(0, 2)).toEqual(["guard", "7"]) // six calls, c-2 twice
    expect(guardRow[2]).toMatch(/^\d+(\.\d)? ms$/)
    expect(await page.locator("#vetoes summary").allTextContents()).toEqual([
      "guard: denied 1, asked 0, rewrote 0",
      "policy: denied 1, asked 1, rewrote 0",
      "rewriter: denied 0, asked 0, rewrote 1"
    ])

    // The drill-down of c-2: both rounds, the rewrite, the ignored allow, the dead extension, the decision.
    const text = await drillInto(page, page.locator("#calls tbody tr", { hasText: "c-2" }))
    expect(text).toContain("c-2 tool_call bash")
    expect(text).toContain("round 1")
    expect(text).toContain("round 2")
    expect(text).toContain('rewrite args → {"command":"rm -rf ./build"}')
    expect(text).toContain('"fine by me" (an allow: ignored, an extension may veto, never permit)')
    expect(text).toContain("DEAD: exited (code 3)")
    expect(text).toContain("policy: allow (rule:allow[1])")
    expect(text).toContain('ALLOW after 2 rounds; args rewritten to {"command":"rm -rf ./build"} by rewriter')
    expect(errors).toEqual([])
    await page.close()
  })

  it("keeps a hostile record inert: no </script> breakout, no markup, shown as text", async () => {
    context() // fails at once without the browser
    const attack = `</script><script>window.pwned=1;alert(1)</script><img src=x onerror="window.pwned=2;alert(2)"><!--\u2028`
    const record = {
      seq: 0,
      session_id: "s",
      time: "2026-12-01T10:00:00.000Z",
      event: "tool_call",
      call_id: `c-${attack}`,
      tool: `bash${attack}`,
      args: { command: attack },
      rounds: [
        {
          round: 1,
          exchanges: [
            { extension: `guard${attack}`, status: "replied", latency_ms: 1, reply: { block: true, reason: attack } },
            { extension: "dead", status: "exited", latency_ms: 1, error: attack, stderr: attack },
            // A `failed` reply's words: kept (--audit-content full), and kept as their digest (the default).
            { extension: "failer", status: "failed", latency_ms: 1, error: "failed", failed: attack },
            {
              extension: "hasher",
              status: "failed",
              latency_ms: 1,
              error: "failed",
              failed: { sha256: "ab12".repeat(16), bytes: 42 }
            }
          ]
        }
      ],
      outcome: {
        decision: "deny",
        reasons: [{ extension: `guard${attack}`, reason: attack }],
        args: { command: attack },
        rounds: 1,
        rewrittenBy: []
      },
      notes: [attack],
      duration_ms: 1
    }
    const audit = join(mkdtempSync(join(tmpdir(), "abhed-hostile-")), `a${"<img src=x onerror=alert(3)>"}.jsonl`)
    // A bad line: its problem (JSON.parse quotes the line) goes into the page's JSON block.
    writeFileSync(audit, `${JSON.stringify(record)}\n</script><script>window.pwned=3;alert(3)</script>\n`)
    const file = await report(audit, 1)
    const html = readFileSync(file, "utf8")
    // Our three script elements close, and nothing else does.
    expect(html.match(/<\/script/gi)).toHaveLength(3)
    const { dialogs, errors, page, requests } = await open(file)
    expect(errors).toEqual([])
    expect(requests).toEqual([])
    expect(dialogs).toEqual([])
    expect(await page.evaluate(() => (globalThis as { pwned?: unknown }).pwned)).toBeUndefined()
    expect(await page.locator("img").count()).toBe(0)
    expect(await page.locator("script").count()).toBe(3)
    const shown = await drillInto(page, page.locator("#calls tbody tr").first())
    expect(shown).toContain(`c-${attack} tool_call bash${attack}`)
    expect(shown).toContain(`BLOCK ${JSON.stringify(attack)}`)
    expect(shown).toContain(`EXITED: ${attack}; its stderr: ${attack}`)
    expect(shown).toContain(`FAILED: failed; it said: ${attack}`)
    expect(shown).toContain("FAILED: failed; it said: 42 bytes, sha256 ab12ab12ab12… (kept with --audit-content full)")
    const summary = (await page.locator("#summary").textContent()) ?? ""
    expect(summary).toContain("<img src=x onerror=alert(3)>")
    expect(summary).toContain("1 line(s) were not audit records")
    expect(await page.locator("#summary li").textContent()).toContain(
      ":2: not JSON (Unexpected token '<', \"</script><\""
    )
    expect(await page.locator("img").count()).toBe(0)
    expect(dialogs).toEqual([])
    await page.close()
  })

  it("writes out bidirectional overrides and invisible characters: a record cannot reorder what the page shows", async () => {
    context() // fails at once without the browser
    // Read left to right, the command shows as harmless: the override reverses what follows it.
    const command = "echo ok #\u202e\u2066 fr- mr\u2069\u200b"
    const record = {
      seq: 0,
      session_id: "s",
      time: "2026-12-01T10:00:00.000Z",
      event: "tool_call",
      call_id: "c-1",
      tool: "bash",
      args: { command },
      rounds: [{ round: 1, exchanges: [{ extension: "guard", status: "replied", latency_ms: 1, reply: {} }] }],
      outcome: { decision: "allow", reasons: [], args: { command }, rounds: 1, rewrittenBy: [] },
      notes: [`note\u202e${command}`],
      duration_ms: 1
    }
    const audit = join(mkdtempSync(join(tmpdir(), "abhed-bidi-")), "a.jsonl")
    writeFileSync(audit, `${JSON.stringify(record)}\n`)
    const { errors, page } = await open(await report(audit))
    const row = page.locator("#calls tbody tr").first()
    const listed = (await row.textContent()) ?? ""
    const drilled = await drillInto(page, row)
    for (const text of [listed, drilled]) {
      expect(text).toContain("echo ok #\\u202e\\u2066 fr- mr\\u2069\\u200b")
      expect(text).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b]/u)
    }
    expect(drilled).toContain("note\\u202eecho ok")
    expect(errors).toEqual([])
    await page.close()
  })

  it("renders a 100k-record audit within seconds, pages its list, and drills into a record", async () => {
    context() // fails at once without the browser
    // 100k records cloned from the recorded tool calls, one second apart.
    const calls = recorded.lines
      .filter((line) => line.includes('"event":"tool_call"'))
      .map((line) => JSON.parse(line) as object)
    const start = Date.parse("2026-11-01T00:00:00Z")
    const lines: Array<string> = []
    for (let i = 0; i < 100_000; i++) {
      const r = calls[i % calls.length]
      lines.push(JSON.stringify({ ...r, seq: i, call_id: `c-${i}`, time: new Date(start + i * 1000).toISOString() }))
    }
    const audit = join(mkdtempSync(join(tmpdir(), "abhed-big-")), "audit.jsonl")
    writeFileSync(audit, `${lines.join("\n")}\n`)
    const cliStarted = Date.now()
    const file = await report(audit)
    const cliMillis = Date.now() - cliStarted
    const { errors, longestTask, millis, page, requests } = await open(file, 180_000)
    const phase = async (name: string) => Number(await page.getAttribute("html", `data-${name}-ms`))
    console.log(
      `100k records: abhed-ext audit --html ${cliMillis} ms; page drawn ${millis} ms after navigation (script ` +
        `${await phase("render")} ms: data unpacked at ${await phase("unpack")}, parsed in ${await phase("parse")}); ` +
        `longest task ${await longestTask()} ms`
    )
    // About 2 s idle and 3 s on a loaded machine (it was 20–45 s when the page parsed and counted the records).
    expect(millis).toBeLessThan(within(1500))
    // The page never froze for long: its data is parsed in one task, and no record before its drill-down.
    expect(await longestTask()).toBeLessThan(within(500))
    expect(await page.getAttribute("html", "data-chunks-unpacked")).toBe("0")
    expect(errors).toEqual([])
    expect(requests).toEqual([])
    expect(await page.locator("#summary").textContent()).toContain("100000 records")
    expect(await page.locator("#calls tbody tr").count()).toBe(100)
    const list = page.locator("#calls")
    expect(await list.locator(".controls span.dim").textContent()).toBe("records 1–100 of 100000 (page 1 of 1000)")
    await list.getByRole("button", { name: "next →" }).click()
    expect(await list.locator("tbody tr td:nth-child(4)").first().textContent()).toBe("c-100")
    await drillInto(page, list.locator("tbody tr", { hasText: "c-101" }))
    expect(await page.getAttribute("html", "data-chunks-unpacked")).toBe("1")
    expect(await page.locator("#drill h3").textContent()).toMatch(/^c-101 tool_call /)
    await page.fill("#search", "c-99999")
    expect(await list.locator("tbody tr td:nth-child(4)").allTextContents()).toEqual(["c-99999"])
    expect(await drillInto(page, list.locator("tbody tr").first())).toContain("c-99999 tool_call")
    expect(await page.getAttribute("html", "data-chunks-unpacked")).toBe("2")
    expect(errors).toEqual([])
    await page.close()
  }, 300_000)
})
