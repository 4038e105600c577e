import { ExtensionHost, type ExtensionHostShape } from "@abhed/host/ExtensionHost"
import { Context, Effect, Exit, Layer, Result, Scope, Stream } from "effect"
import * as CallIds from "./CallIds.ts"
import { dispatch } from "./Dispatch.ts"
import * as JudgedCalls from "./JudgedCalls.ts"
import { decodeInputLine, type InputRequest, isBlank } from "../InputLine.ts"
import type { ErrorLine, OutputLine } from "../Output.ts"

/**
 * A recorded or live session through the host, one input line at a time (shared by `run` and `demo`).
 *
 * Each line is decided and handed to `onLine` before the next is read, so the output streams and the CLI can sit
 * in a pipe. The host (its extension processes) starts at the first valid request, so the session id can be the
 * one that request carries; it closes (sending `session_end`) when the input ends. A run is one session: a later
 * line that names another `session_id` is an error line, never decided in the wrong session (unless `sessionId`
 * is set, which puts every line in that session).
 */

export interface LineResult {
  /** 1-based, blank lines included, so it matches what an editor shows. */
  readonly line: number
  readonly input: InputRequest | undefined
  readonly output: OutputLine | ErrorLine
  /** An `invoke_tool` refused because of how its call was decided (JudgedCalls.ts): not a bad line. */
  readonly refused?: true
}

export interface SessionOptions<E, R, HE, HR> {
  readonly lines: Stream.Stream<string, E, R>
  /** The host for a session id (process-backed for the CLI; fakes in tests). */
  readonly host: (sessionId: string) => Layer.Layer<ExtensionHost, HE, HR>
  /** Used when the first request carries no `session_id`. */
  readonly defaultSessionId: string
  /** When set, every line is decided in this session, whatever its own `session_id`. */
  readonly sessionId?: string | undefined
  readonly onLine: (result: LineResult) => Effect.Effect<void>
}

export const runSession = <E, R, HE, HR>(options: SessionOptions<E, R, HE, HR>): Effect.Effect<void, E | HE, R | HR> =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const callIds = CallIds.make()
    const judged = JudgedCalls.make()
    let host: ExtensionHostShape | undefined
    let session: { readonly id: string; readonly line: number } | undefined
    const hostFor = (request: InputRequest, line: number) =>
      Effect.gen(function* () {
        if (host !== undefined) return host
        const sessionId = options.sessionId ?? request.session_id ?? options.defaultSessionId
        session = { id: sessionId, line }
        const context = yield* Layer.buildWithScope(options.host(sessionId), scope)
        host = Context.get(context, ExtensionHost)
        return host
      })
    const body = options.lines.pipe(
      Stream.zipWithIndex,
      Stream.runForEach(([text, index]) =>
        Effect.gen(function* () {
          const line = index + 1
          if (isBlank(text)) return
          const decoded = decodeInputLine(text)
          if (Result.isFailure(decoded)) {
            return yield* options.onLine({ line, input: undefined, output: { error: decoded.failure, line } })
          }
          const own = decoded.success.session_id
          if (options.sessionId === undefined && session !== undefined && own !== undefined && own !== session.id) {
            const error =
              `session_id ${JSON.stringify(own)} is not this run's session ${JSON.stringify(session.id)} ` +
              `(line ${session.line}): a run decides one session; split the input by session_id, or give ` +
              "--session-id to decide every line in one session"
            return yield* options.onLine({ line, input: undefined, output: { error, line } })
          }
          // An invoke_tool for a call this run decided is that call's, and runs only as it was decided
          // (JudgedCalls.ts); one without call_id takes that call's id, never a call's it is not for.
          const judgedInvoke =
            decoded.success.event === "invoke_tool"
              ? judged.judge(
                  decoded.success.call_id,
                  decoded.success.tool,
                  decoded.success.args,
                  JudgedCalls.providerOf(host === undefined ? undefined : yield* host.tools, decoded.success.tool),
                  host === undefined ? undefined : yield* host.generation
                )
              : undefined
          const completed = callIds.complete(
            decoded.success.event === "invoke_tool" && decoded.success.call_id === undefined && judgedInvoke
              ? { ...decoded.success, call_id: judgedInvoke.callId }
              : decoded.success
          )
          if (Result.isFailure(completed)) {
            return yield* options.onLine({ line, input: undefined, output: { error: completed.failure, line } })
          }
          const request = completed.success
          const refused = judgedInvoke?.refusal
          if (refused !== undefined && request.event === "invoke_tool") {
            // Not sent to the owner, but recorded: the audit shows what the agent tried to run after the verdict.
            const h = yield* hostFor(request, line)
            yield* Effect.ignore(
              h.invokeTool({ tool: request.tool, args: request.args, call_id: request.call_id, refused })
            )
            return yield* options.onLine({ line, input: request, output: { error: refused, line }, refused: true })
          }
          const h = yield* hostFor(request, line)
          // Who provides the tool as the call is decided (the set a reload may replace before its invoke).
          const provider =
            request.event === "tool_call" ? JudgedCalls.providerOf(yield* h.tools, request.tool) : undefined
          // Which set decides it: read before, so a reload that begins meanwhile counts as one since.
          const generation = request.event === "tool_call" ? yield* h.generation : undefined
          const output = yield* dispatch(h, request).pipe(
            Effect.catch((e): Effect.Effect<ErrorLine> => Effect.succeed({ error: e.message, line })),
            // A bug must not end the session with the rest of the input undecided: this line gets an error (the
            // trace goes to the log, on stderr) and the next line is read.
            Effect.catchDefect((defect) =>
              Effect.as(Effect.logError(`line ${line}: internal error`, defect), {
                error: `internal error: ${defect instanceof Error ? defect.message : "unknown"}`,
                line
              })
            )
          )
          // The call's verdict is spent once its tool ran (its owner answered, even with is_error).
          if (request.event === "invoke_tool" && !("error" in output)) judgedInvoke?.ran(line)
          // What a later tool_result without args gets: the args the call was decided to run with.
          if (request.event === "tool_call" && request.call_id !== undefined && "args" in output) {
            callIds.ran(request.call_id, output.args)
            judged.decided({
              callId: request.call_id,
              tool: request.tool,
              proposed: request.args,
              // No round ran (the host refused args it cannot send, or the policy alone decided): nothing settled,
              // and the `{}` such an output prints must not hold an invoke of the tool with `{}`.
              settled: output.rounds === 0 ? request.args : output.args,
              decision: output.decision,
              line,
              provider,
              generation
            })
          } else if (request.event === "tool_call" && request.call_id !== undefined) {
            // No decision (an internal error): its invoke must not run as if it had been allowed.
            const args = request.args
            judged.decided({
              callId: request.call_id,
              tool: request.tool,
              proposed: args,
              settled: args,
              decision: "error",
              line,
              provider,
              generation
            })
          }
          yield* options.onLine({ line, input: request, output })
        })
      )
    )
    // Closing the scope stops the extensions (session_end, stdin closed, grace, signals) however the input ended.
    yield* Effect.onExit(body, (exit) => Scope.close(scope, Exit.isSuccess(exit) ? Exit.void : exit))
  })
