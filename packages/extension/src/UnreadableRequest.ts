import * as Schema from "effect/Schema"

/**
 * A request line the extension cannot read (docs/design.md#unreadable-requests): `Extension.respond` rejects with it,
 * `EffectExtension.respond` and `run` fail with it. `Extension.main` writes `reason` to stderr and exits 1.
 */
export class UnreadableRequest extends Schema.TaggedError<UnreadableRequest>()("UnreadableRequest", {
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}
