import { Argument, Command, Flag } from "effect/cli"
import { lazyHandler } from "../LazyHandler.ts"

/**
 * `abhed-ext audit`'s flags and arguments, read at start to parse the command line; what it does is
 * AuditMain.ts, loaded when it runs.
 */
export const flags = {
  call: Flag.String("call").pipe(
    Flag.withDescription("only the records of this call id (repeat for more)"),
    Flag.atLeast(0)
  ),
  extension: Flag.String("extension").pipe(
    Flag.withDescription("only the records this extension was asked about: replied, or failed to (repeat for more)"),
    Flag.atLeast(0)
  ),
  decision: Flag.Literals("decision", ["deny", "ask", "allow"]).pipe(
    Flag.withDescription("only the tool calls decided so (repeat for more)"),
    Flag.atLeast(0)
  ),
  json: Flag.Boolean("json").pipe(
    Flag.withDescription(
      "print the matching records' lines as they are in the file (JSONL; what a terminal would obey, escaped), not words"
    ),
    Flag.withDefault(false)
  ),
  html: Flag.String("html").pipe(
    Flag.withDescription("write one self-contained HTML page of the matching records to this file"),
    Flag.optional
  ),
  files: Argument.String("file").pipe(
    Argument.withDescription("audit files written by `abhed-ext run --audit` (- for stdin)"),
    Argument.atLeast(1)
  )
}

export const audit = Command.make(
  "audit",
  flags,
  lazyHandler(() => import("./AuditMain.ts").then((m) => m.auditMain))
).pipe(
  Command.withShortDescription("Show the records of an audit file: who said what about each call, and why"),
  Command.withDescription(
    "Read audit files written by `abhed-ext run --audit` and show each record as the demo shows a line: the " +
      "request, what each extension said in each round (or why it was dead), the allows that counted for nothing, " +
      "the notes (the policy's rule among them), the decision and the timings. --call, --extension and --decision " +
      "choose the records; --json prints them as they are; --html writes one self-contained page to look at. A line " +
      "that is not a record is reported (file:line) and skipped, the others are still shown. Exit codes: 0 shown, " +
      "1 a line was not a record or a file could not be read (or written), 64 bad usage."
  ),
  Command.withExamples([
    {
      command: "abhed-ext audit audit.jsonl --call c-3 --call c-4",
      description: "why c-3 was denied, and why c-4 was not"
    },
    {
      command: "abhed-ext audit audit.jsonl --decision deny --extension guard",
      description: "the calls guard was asked about that were denied"
    },
    { command: "abhed-ext audit audit.jsonl --decision deny --json | jq .args", description: "the denied calls' args" },
    { command: "abhed-ext audit audit-*.jsonl --html report.html", description: "a page to look at" }
  ])
)
