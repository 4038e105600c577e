/**
 * credential-redactor: replaces credentials in tool output with `[redacted]` before the model reads it.
 *
 *   node credential-redactor.ts
 *
 * Covers AWS access key ids (AKIA…, ASIA…), GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_) and PEM
 * private key blocks, including a block cut off by truncated output. Idempotent: `[redacted]` matches no
 * pattern, so a second pass proposes nothing and settling ends at once.
 */
import { Extension } from "@abhed/extension"
import { Effect } from "effect"

export const Redacted = "[redacted]"

const Patterns: ReadonlyArray<RegExp> = [
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g,
  /\bgh[pousr]_[A-Za-z0-9]{36,255}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g
]

export const redact = (text: string): string =>
  Patterns.reduce((acc, pattern) => acc.replace(pattern, Redacted), text)

if (import.meta.main) {
  Extension.main({
    tool_result: (req) => {
      const content = redact(req.content)
      // Only propose a change when there is one: `{}` lets the content settle without another round.
      return Effect.succeed(content === req.content ? {} : { content })
    }
  })
}
