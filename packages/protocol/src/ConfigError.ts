import { Schema } from "effect"

/** One problem in a config file: where (`extensions[1].events[0]`, "" = the file as a whole) and what to fix. */
export const ConfigIssue = Schema.Struct({ path: Schema.String, message: Schema.String })
export type ConfigIssue = typeof ConfigIssue.Type

/** `abhed.json` is invalid. Lists every problem found, in document order, never just the first. */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  issues: Schema.Array(ConfigIssue)
}) {
  /** One issue per line: `path: message`. */
  override get message(): string {
    return this.issues.map(formatIssue).join("\n")
  }
}

export const formatIssue = (issue: ConfigIssue): string =>
  issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`
