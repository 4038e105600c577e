import { formatReasons } from "@abhed/core"
import { Schema } from "effect"

/**
 * `context` kept nothing because a failure withheld it (a context filter with `on_failure: "deny"` or `"ask"` failed
 * or is dead, or the messages could not be sent): the turn must stop rather than send what the filter was there to
 * hold back (docs/design.md#failures). `reasons` say who and why.
 */
export class ContextWithheld extends Schema.TaggedError<ContextWithheld>()("ContextWithheld", {
  reasons: Schema.Array(Schema.Struct({ extension: Schema.String, reason: Schema.String }))
}) {
  override get message() {
    return `context withheld: ${formatReasons(this.reasons)}`
  }
}
