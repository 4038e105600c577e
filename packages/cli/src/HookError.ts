import { Runtime, Schema } from "effect"

/** `abhed-ext hook` / `import-hooks` were given something they cannot use: exit 64 (usage, DESIGN §7), one line on stderr. */
export class HookUsage extends Schema.TaggedError<HookUsage>()("HookUsage", { detail: Schema.String }) {
  override get [Runtime.errorExitCode](): number {
    return 64
  }
  override get [Runtime.errorReported](): boolean {
    return false
  }
  override get message(): string {
    return this.detail
  }
}
