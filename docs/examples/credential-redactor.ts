/**
 * credential-redactor: replaces credentials in tool output with `[redacted]` before the model reads it.
 *
 *   node credential-redactor.ts
 *
 * Covers AWS access key ids (AKIA…, ASIA…), AWS secret access keys where they are labelled as such
 * (`aws_secret_access_key = …`, `AWS_SECRET_ACCESS_KEY=…`: a bare 40-character string is too common to redact),
 * GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_) and PEM private key blocks, including a block cut off
 * by truncated output. Idempotent: `[redacted]` matches no
 * pattern, so a second pass proposes nothing and settling ends at once.
 */
import { Extension } from "@abhed/extension"

export const Redacted = "[redacted]"

/** Each pattern with what replaces a match (`$1` keeps a label such as `aws_secret_access_key = `). */
const Patterns: ReadonlyArray<readonly [RegExp, string]> = [
  [/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, Redacted],
  [/\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, Redacted],
  [/(\baws_secret_access_key["']?\s*[=:]\s*["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])/gi, `$1${Redacted}`],
  [/\bgh[pousr]_[A-Za-z0-9]{36,255}\b/g, Redacted],
  [/\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g, Redacted]
]

export const redact = (text: string): string =>
  Patterns.reduce((acc, [pattern, replacement]) => acc.replace(pattern, replacement), text)

if (import.meta.main) {
  Extension.main({
    tool_result: (req) => {
      const content = redact(req.content)
      // Only propose a change when there is one: `{}` lets the content settle without another round.
      return content === req.content ? {} : { content }
    }
  })
}
