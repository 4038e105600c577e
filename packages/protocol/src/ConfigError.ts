import * as Schema from "effect/Schema"

/**
 * One problem in a config file: where (`extensions[1].events[0]`, "" = the file as a whole; `line` and `column`,
 * 1-based, when the config was read from text) and what to fix.
 */
export const ConfigIssue = Schema.Struct({
  path: Schema.String,
  message: Schema.String,
  line: Schema.optionalKey(Schema.Number),
  column: Schema.optionalKey(Schema.Number)
})
export type ConfigIssue = typeof ConfigIssue.Type

/** `abhed.json` is invalid. Lists every problem found, in document order, never just the first. */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  issues: Schema.Array(ConfigIssue)
}) {
  /** One issue per line: `line:column: path: message`. */
  override get message(): string {
    return this.issues.map((issue) => formatIssue(issue)).join("\n")
  }
}

/**
 * One issue as a line: `path: message`, prefixed with `line:column: ` when known, and with the file when given
 * (`abhed.json:3:17: extensions[0].events[0]: unknown event …`, the form editors and terminals link to).
 */
export const formatIssue = (issue: ConfigIssue, file?: string): string => {
  const where = issue.line === undefined ? undefined : `${issue.line}:${issue.column ?? 1}`
  const prefix =
    file === undefined
      ? where === undefined
        ? ""
        : `${where}: `
      : where === undefined
        ? `${file}: `
        : `${file}:${where}: `
  return `${prefix}${issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`}`
}
