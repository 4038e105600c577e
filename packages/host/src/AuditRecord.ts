/**
 * One record per dispatch (docs/design.md#architecture). Extension entries are sorted by name, so identical inputs give
 * identical records except for the timing fields (`latency_ms`, `duration_ms`).
 */
export type ExchangeStatus =
  | "replied"
  | "failed"
  | "timed_out"
  | "exited"
  | "malformed"
  | "unsolicited"
  | "too_long"
  | "dead"
  | "not_subscribed"
  | "not_matched"

export interface AuditExchange {
  readonly extension: string
  readonly status: ExchangeStatus
  readonly latency_ms: number
  /** The decoded reply, when the extension replied. */
  readonly reply?: unknown
  /** Known reply fields that belong to other events (ignored). */
  readonly ignored?: ReadonlyArray<string>
  /** Why the exchange failed, when it did. */
  readonly error?: string
  /**
   * A dead extension's own word on why (the line of its stderr that names the error), when it wrote one: verbatim
   * with `--audit-content full`, else as `{sha256, bytes}` like every content (stderr can hold what the extension saw).
   */
  readonly stderr?: string | ContentDigest
  /**
   * A `failed` reply's words (status `failed`: why the extension could not answer), when it gave any: made printable
   * and cut as the host repeats them, verbatim with `--audit-content full`, else as `{sha256, bytes}` like every
   * content (they may quote what the extension read).
   */
  readonly failed?: string | ContentDigest
}

export interface AuditRound {
  readonly round: number
  readonly exchanges: ReadonlyArray<AuditExchange>
}

export interface AuditRecord {
  readonly seq: number
  /** The session the dispatch belongs to: one file may hold several sessions' records. */
  readonly session_id: string
  /** When the dispatch began (ISO 8601, from the effect Clock). */
  readonly time: string
  readonly event: string
  readonly call_id: string | undefined
  /**
   * For tool_call, tool_result and invoke_tool: the tool, and the args as the agent passed them, which the first
   * round judged (verbatim, like the outcome's: docs/design.md#failures). Absent args: the host could not send them
   * (`notes`).
   */
  readonly tool?: string
  readonly args?: { readonly [key: string]: unknown }
  readonly rounds: ReadonlyArray<AuditRound>
  readonly outcome: unknown
  /**
   * For tool_result and context: what came in, when an extension acted on it (the outcome holds what came out):
   * a tool_result's `{content, is_error}` as the agent passed them, a context's `{messages}` as the agent sent
   * them. Absent when none did: a tool_result that came out as it went in, in one round, with no is_error raised;
   * a context that no filter sent a `keep` for and that was not withheld. Then the outcome is the input.
   * Content like the outcome's: verbatim with `--audit-content full`, else `{sha256, bytes}`. Input the host
   * could not send is not recorded at all (`notes`).
   */
  readonly input?: RecordedInput
  /** Anything else worth keeping: rejected tools, out-of-range keep indices, the policy decision. */
  readonly notes: ReadonlyArray<string>
  readonly duration_ms: number
  /**
   * Only in a `reload` record (event `"reload"`, written when a new config takes over within the session, with no
   * rounds, `outcome` `{kept, restarted, removed, added}`: extension names): the hex sha256 fingerprints of the set
   * before and after (every extension's definition and script digests, and the policy and other settings).
   */
  readonly reload?: { readonly before: string; readonly after: string }
}

/** What came in to a tool_result or a context dispatch (`AuditRecord.input`). */
export type RecordedInput =
  | { readonly content: string | ContentDigest; readonly is_error: boolean }
  | { readonly messages: ReadonlyArray<unknown> | ContentDigest }

/** A content recorded without itself: the SHA-256 of its UTF-8 text (hex) and that text's length in bytes. */
export interface ContentDigest {
  readonly sha256: string
  readonly bytes: number
}
