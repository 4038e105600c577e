import type { AcceptedTool } from "@abhed/core"
import { canonicalJson, type JsonObject } from "@abhed/protocol"
import * as ArgsIndex from "./ArgsIndex.ts"
import { argsKey } from "./ArgsKey.ts"

/**
 * The `tool_call`s `abhed-ext run` decided in its session, so that an `invoke_tool` for one of them runs only as it
 * was decided (docs/cli.md, input): never after a deny, only with the settled args (an extension's rewrite included)
 * on the tool the call named, and once. `run` is the one running an extension's tool, so a deny it has just printed
 * must not be lifted by the next line: an agent that sends the invoke without reading the decision (or with the args
 * it first proposed) would otherwise run what the guards vetoed; and one verdict must not license many runs (a guard
 * that allows three deletions a session would allow any number).
 *
 * Which call an invoke is for: the one its `call_id` names, when the line gives one that a decided call holds. Else
 * (no `call_id`, or one no call was decided under) a decision of the same tool whose args, as proposed or as settled,
 * are the invoke's, whether or not a result was sent for it since: the latest, unless it is an allowed call that ran
 * already, when an earlier one that has not run is taken (two calls with the same args, then their two invokes). An
 * id the agent makes up for the invoke does not lift a deny. A call decided again under its id keeps its earlier
 * decision here too (for the args match): reusing a denied call's id for a harmless call must not free the denied
 * args. An invoke no decided call holds runs as before (the agent judged it some other way: a tool of the agent's
 * own, a recording cut short). Pure state over one session: one entry per decision.
 */
export interface JudgedCalls {
  /** A `tool_call` decided: its id, tool, the args proposed and settled, the decision, and its line. */
  readonly decided: (call: Decided) => void
  /**
   * The decided call the `invoke_tool` of `tool` with `args` is for, and why it must not run (`refusal`, undefined
   * when it may); undefined when no decided call holds it. `named`: the `call_id` the line gave (or undefined).
   */
  readonly judge: (
    named: string | undefined,
    tool: string,
    args: JsonObject,
    provider?: string | undefined,
    generation?: number | undefined
  ) => Judged | undefined
}

export interface Decided {
  readonly callId: string
  readonly tool: string
  readonly proposed: JsonObject
  readonly settled: JsonObject
  /** The final decision, or `error`: the call got an internal error line, no decision (it never runs either). */
  readonly decision: "allow" | "ask" | "deny" | "error"
  readonly line: number
  /** Who provided the tool, and with what input_schema, when the call was decided (`providerOf`). */
  readonly provider?: string | undefined
  /** The host's `generation` read before the call was dispatched: which set decided it. */
  readonly generation?: number | undefined
}

export interface Judged {
  readonly callId: string
  readonly refusal: string | undefined
  /** The invoke ran (its owner answered) on `line`: the call does not run again. */
  readonly ran: (line: number) => void
}

/** A decision as kept: its args as keys, and the line its invoke ran on. */
interface Kept {
  readonly callId: string
  readonly tool: string
  readonly proposed: string | undefined
  readonly settled: string | undefined
  readonly decision: string
  readonly line: number
  readonly provider: string | undefined
  readonly generation: number | undefined
  ranOn: number | undefined
}

/**
 * Which extension provides `tool` among the host's `tools`, and with what input_schema (undefined: none, the agent's
 * own tool). A reload may hand the name to another extension, or change its args, between a call's decision and
 * its invoke: the verdict was given on the tool as it was, and must not run whatever holds the name now.
 */
export const providerOf = (tools: ReadonlyArray<AcceptedTool> | undefined, tool: string): string | undefined => {
  const entry = tools?.find((t) => t.tool.name === tool)
  return entry === undefined ? undefined : canonicalJson([entry.extension, entry.tool.input_schema])
}

export const make = (): JudgedCalls => {
  /** The latest decision under each id. */
  const byId = new Map<string, Kept>()
  /**
   * Per tool, per args key (proposed and settled): the decisions with those args, latest last. A call decided again
   * under its id keeps the earlier one here too. Indexed, so an invoke no call holds costs no walk through them all.
   */
  const byArgs = ArgsIndex.make<Kept>()
  const index = (call: Kept, key: string | undefined) => {
    if (key !== undefined) byArgs.add(call.tool, key, call)
  }
  const heldBy = (tool: string, args: string) => {
    const calls = byArgs.get(tool, args)
    let ran: Kept | undefined
    for (let i = calls.length - 1; i >= 0; i--) {
      const call = calls[i]
      if (call === undefined) continue
      if (call.decision === "deny" || call.decision === "error" || call.ranOn === undefined) return call
      ran ??= call
    }
    return ran
  }
  const refusal = (
    call: Kept,
    named: string | undefined,
    tool: string,
    args: string,
    provider: string | undefined,
    generation: number | undefined
  ) => {
    const id = JSON.stringify(call.callId)
    // An id the line made up, which the args led past: said, so the agent's author sees why its own id did not count.
    const via =
      named !== undefined && named !== call.callId
        ? ` (call_id ${JSON.stringify(named)} names no decided call; its tool and args name this one)`
        : ""
    if (call.decision === "error")
      return `invoke_tool: the tool_call ${id} (line ${call.line}) was never decided (an internal error)${via}: it never runs`
    if (call.decision === "deny")
      return `invoke_tool: the tool_call ${id} (line ${call.line}) was denied${via}: a denied call never runs`
    if (call.tool !== tool)
      return (
        `invoke_tool: call_id ${id} is the tool_call of ${JSON.stringify(call.tool)} (line ${call.line}), ` +
        `not of ${JSON.stringify(tool)}: nothing ran`
      )
    if (call.settled !== args)
      return (
        `invoke_tool: the args are not those the tool_call ${id} (line ${call.line}) was decided to run with${via}: ` +
        `send its output's "args" (an extension may have rewritten them); nothing ran`
      )
    if (call.ranOn !== undefined)
      return (
        `invoke_tool: the tool_call ${id} (line ${call.line}) ran already (line ${call.ranOn})${via}: a decided ` +
        "call runs once; send a new tool_call to run it again; nothing ran"
      )
    if (call.provider !== provider)
      return (
        `invoke_tool: ${JSON.stringify(tool)} is no longer the tool the tool_call ${id} (line ${call.line}) was ` +
        `decided on${via} (a reload changed which extension provides it, or its input_schema): send a new ` +
        "tool_call; nothing ran"
      )
    // The verdict was the set's that decided it: a reload since (a guard added, a script changed) may veto the
    // call, or ask about it anew. `run` cannot ask, so the call is judged again by a new tool_call.
    if (call.generation !== undefined && generation !== undefined && call.generation !== generation)
      return (
        `invoke_tool: the config was reloaded since the tool_call ${id} (line ${call.line}) was decided${via}: ` +
        "its verdict was the old extensions'; send a new tool_call for the extensions in force to judge; nothing ran"
      )
    return undefined
  }
  return {
    decided: (given) => {
      const call: Kept = {
        ...given,
        proposed: argsKey(given.proposed),
        settled: argsKey(given.settled),
        provider: given.provider,
        generation: given.generation,
        ranOn: undefined
      }
      byId.set(call.callId, call)
      index(call, call.settled)
      if (call.proposed !== call.settled) index(call, call.proposed)
    },
    judge: (named, tool, given, provider, generation) => {
      const args = argsKey(given)
      if (args === undefined) return undefined
      const call = (named === undefined ? undefined : byId.get(named)) ?? heldBy(tool, args)
      if (call === undefined) return undefined
      return {
        callId: call.callId,
        refusal: refusal(call, named, tool, args, provider, generation),
        ran: (line) => {
          call.ranOn ??= line
        }
      }
    }
  }
}
