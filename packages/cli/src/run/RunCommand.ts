import { Argument, Command, Flag } from "effect/cli"
import { lazyHandler } from "../LazyHandler.ts"

/**
 * `abhed-ext run`'s flags and arguments, read at start to parse the command line; what it does is
 * RunMain.ts, loaded when it runs.
 */
export const flags = {
  config: Flag.String("config").pipe(
    Flag.withAlias("c"),
    Flag.withDescription(
      "the abhed.json to load, exactly that file (-: stdin, with the events from a file); default: the managed, " +
        "user and (trusted) project layers"
    ),
    Flag.optional
  ),
  audit: Flag.String("audit").pipe(
    Flag.withDescription("append the audit records (one JSON line per dispatch) to this file"),
    Flag.optional
  ),
  auditContent: Flag.Literals("audit-content", ["digest", "full"]).pipe(
    Flag.withDescription(
      "what the audit keeps of tool_result content, invoke_tool results, context messages and compaction " +
        "summaries, in replies, outcomes and inputs: digest = {sha256, bytes} (default); full = verbatim, secrets included"
    ),
    Flag.withDefault("digest" as const)
  ),
  sessionId: Flag.String("session-id").pipe(
    Flag.withDescription(
      'session id sent to the extensions (default: the first request\'s session_id, else "abhed-ext")'
    ),
    Flag.optional
  ),
  summary: Flag.Boolean("summary").pipe(
    Flag.withDescription(
      "at the end, on stderr: tool calls by verdict, each extension live or dead (with the cause), its p50/p99 " +
        "latency, the requests it could not answer, and the allows it gave that counted for nothing"
    ),
    Flag.withDefault(false)
  ),
  watch: Flag.Boolean("watch").pipe(
    Flag.withDescription(
      "reload when the config changes (a layer file, --config's file, a script an extension names, the trust " +
        "store): unchanged extensions keep running, changed ones restart, removed ones stop, added ones start"
    ),
    Flag.withDefault(false)
  ),
  strict: Flag.Boolean("strict").pipe(
    Flag.withDescription(
      "exit 1 when the config has no extension, the project config is not trusted, or an extension died or could " +
        "not answer a request (after every line is decided)"
    ),
    Flag.withDefault(false)
  ),
  events: Argument.String("events").pipe(
    Argument.withDescription("a JSONL file of requests, one per line (default, or -: stdin)"),
    Argument.optional
  )
}

/**
 * `abhed-ext run --config FILE [--audit FILE] [EVENTS.jsonl]`: docs/design.md#output, one output line per input line.
 */
export const run = Command.make(
  "run",
  flags,
  lazyHandler(() => import("./RunMain.ts").then((m) => m.runMain))
).pipe(
  Command.withShortDescription("Decide a stream of requests with the extensions of a config"),
  Command.withDescription(
    "Run the extensions of a config over a stream of requests (a JSONL file, or stdin). Each input line is a request " +
      "as on the wire (session_id and call_id optional); each prints one JSON line with the decision as soon as it " +
      'is made, e.g. {"event":"tool_call","decision":"deny","reasons":[…],"args":{…},"rounds":1}. A bad input ' +
      'line prints {"error":"…","line":N} and the run goes on. Events `-` (or none) is stdin. Exit codes: 0 ' +
      "done, 1 input unreadable, 2 invalid config (each problem on stderr, with its path), 64 bad usage. Nothing " +
      "but JSON lines on stdout: this help, logs and errors go to stderr."
  ),
  Command.withExamples([
    {
      command: "abhed-ext run --config docs/examples/abhed.json docs/examples/session.jsonl",
      description: "run a recorded session"
    },
    {
      command: 'echo \'{"event":"tool_call","tool":"read","args":{"path":".env"}}\' | abhed-ext run -c abhed.json',
      description: "decide one call from stdin"
    },
    {
      command: "abhed-ext run -c abhed.json --audit audit.jsonl session.jsonl | jq -c 'select(.decision==\"deny\")'",
      description: "keep the audit trail; show only denied calls"
    }
  ])
)
