import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as StderrTail from "../src/StderrTail.ts"

/** The stderr keeper against a whole-input reference model, for every way of cutting the input into chunks. */

const byte = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(0x0a, 0x0d) },
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }) }
)
const input = fc.record({
  bytes: fc.array(byte, { maxLength: 300 }).map((a) => Uint8Array.from(a)),
  cuts: fc.array(fc.nat({ max: 300 }), { maxLength: 12 }),
  tailBytes: fc.integer({ min: 1, max: 64 }),
  maxLineBytes: fc.integer({ min: 1, max: 24 })
})

const chunksOf = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const points = [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b)
  const out: Array<Uint8Array> = []
  let start = 0
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(start, p))
    start = p
  }
  return out
}

const decode = (bytes: Uint8Array) => new TextDecoder("utf-8", { fatal: false }).decode(bytes)

const referenceLines = (bytes: Uint8Array, maxLineBytes: number): Array<string> => {
  const lines: Array<Array<number>> = [[]]
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] ?? 0
    if (b === 0x0a && i > 0 && bytes[i - 1] === 0x0d) continue // CRLF is one terminator
    if (b === 0x0a || b === 0x0d) lines.push([])
    else lines[lines.length - 1]?.push(b)
  }
  return lines.flatMap((line) => {
    const pieces: Array<string> = []
    for (let at = 0; at < line.length; at += maxLineBytes) {
      pieces.push(decode(Uint8Array.from(line.slice(at, at + maxLineBytes))))
    }
    return pieces
  })
}

const referenceTail = (bytes: Uint8Array, tailBytes: number): string => {
  const last = bytes.subarray(Math.max(0, bytes.length - tailBytes))
  let skip = 0
  while (skip < last.length && skip < 3 && ((last[skip] ?? 0) & 0xc0) === 0x80) skip++
  return decode(last.subarray(skip))
}

describe("StderrTail", () => {
  it("logs the same lines and keeps the same tail however the input is chunked", () => {
    fc.assert(
      fc.property(input, ({ bytes, cuts, maxLineBytes, tailBytes }) => {
        const tail = StderrTail.make({ tailBytes, maxLineBytes })
        const lines = chunksOf(bytes, cuts).flatMap((chunk) => tail.push(chunk))
        lines.push(...tail.flush())
        expect(lines).toEqual(referenceLines(bytes, maxLineBytes))
        expect(tail.tail()).toBe(referenceTail(bytes, tailBytes))
      }),
      { numRuns: 1000 }
    )
  })

  it("keeps at most 64 KiB by default, the most recent bytes", () => {
    const tail = StderrTail.make()
    const line = new TextEncoder().encode(`${"e".repeat(1023)}\n`)
    for (let i = 0; i < 2000; i++) tail.push(line)
    tail.push(new TextEncoder().encode("last line\n"))
    const kept = tail.tail()
    expect(Buffer.byteLength(kept)).toBe(64 * 1024)
    expect(kept.endsWith("last line\n")).toBe(true)
  })

  it("cuts an endless line into bounded pieces instead of buffering it", () => {
    const tail = StderrTail.make({ maxLineBytes: 8 })
    const pieces = tail.push(new TextEncoder().encode("a".repeat(20)))
    expect(pieces).toEqual(["aaaaaaaa", "aaaaaaaa"])
    expect(tail.flush()).toEqual(["aaaa"])
  })
})

describe("errorLine: the line of a dead extension's stderr that says why", () => {
  const node = [
    "file:///work/guard.cjs:1",
    'import * as fs from "node:fs"',
    "^^^^^^",
    "",
    "SyntaxError: Cannot use import statement outside a module",
    "    at wrapSafe (node:internal/modules/cjs/loader:1486:18)",
    "    at Module._compile (node:internal/modules/cjs/loader:1528:20)",
    "    at node:internal/main/run_main_module:36:49",
    "",
    "Node.js v24.1.0",
    ""
  ].join("\n")
  const python = [
    "Traceback (most recent call last):",
    '  File "/work/guard.py", line 3, in <module>',
    "    import requests",
    "ModuleNotFoundError: No module named 'requests'",
    ""
  ].join("\n")

  it.each([
    ["Node: the error line above the stack", node, "SyntaxError: Cannot use import statement outside a module"],
    ["Python: the traceback's last line", python, "ModuleNotFoundError: No module named 'requests'"],
    [
      "Node with an error code",
      "node:internal/modules/esm/resolve:1\n\nError [ERR_MODULE_NOT_FOUND]: Cannot find package 'x'\n    at f (a:1:2)\n{\n  code: 'ERR_MODULE_NOT_FOUND'\n}\n\nNode.js v24.1.0\n",
      "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x'"
    ],
    [
      "a dotted Python exception",
      'Traceback:\n  File "x"\njson.decoder.JSONDecodeError: Expecting value\n',
      "json.decoder.JSONDecodeError: Expecting value"
    ],
    [
      "no error line: the last line that is not a frame",
      "guard.sh: line 3: jq: command not found\n",
      "guard.sh: line 3: jq: command not found"
    ],
    ["\\r\\n line ends, and a coloured error", "starting\r\n\u001b[31mError: boom\u001b[0m\r\n", "Error: boom"],
    ["control and invisible characters escaped", "Error: a\u0007b\u202ec\u0000", "Error: a\\x07b\\u202ec\\x00"],
    [
      "a .ts extension under a Node too old for it: the Node it needs, and the one that ran",
      "node:internal/modules/esm/get_format:189\n  throw new ERR_UNKNOWN_FILE_EXTENSION(ext, filepath);\n        ^\n\nTypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension \".ts\" for /w/guard.ts\n    at f (a:1:2) {\n  code: 'ERR_UNKNOWN_FILE_EXTENSION'\n}\n\nNode.js v20.20.2\n",
      'a .ts extension needs Node 24 on PATH (this is Node.js v20.20.2): TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension ".ts" for /w/guard.ts'
    ]
  ])("%s", (_, tail, line) => {
    expect(StderrTail.errorLine(tail)).toBe(line)
  })

  it("is bounded, and undefined for a stderr of blank lines", () => {
    const long = StderrTail.errorLine(`Error: ${"x".repeat(10_000)}`)
    expect(long?.length).toBe(StderrTail.MaxErrorLineChars)
    expect(long?.endsWith("…")).toBe(true)
    expect(StderrTail.errorLine("\n \n\r\n")).toBeUndefined()
    expect(StderrTail.errorLine("")).toBeUndefined()
  })
})
