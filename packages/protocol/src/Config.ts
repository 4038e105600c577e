import * as Schema from "effect/Schema"
import { type EventName, EventNames } from "./Event.ts"
import {
  ConfigFile,
  ExtensionFile,
  McpProtocolEvents,
  OnFailureValues,
  PolicyFile,
  PolicyRuleFile,
  ReplyIdsValues
} from "./ConfigSchema.ts"

/**
 * The decoded, defaulted configuration (`abhed.json`, docs/design.md#configuration): what `decodeConfig` gives. Every
 * type here is the decoded side of the Schema in ConfigSchema.ts, whose keys carry their defaults: the one statement
 * of the shape and of the defaults. Relative `cwd` is resolved by the host against the config file's folder, since
 * that needs the file system.
 */
export type Config = typeof ConfigFile.Type
export type ExtensionConfig = typeof ExtensionFile.Type
export type PolicyConfig = typeof PolicyFile.Type
/** A policy rule: a tool name (glob) and globs on named args; every named arg must match. */
export type PolicyRule = typeof PolicyRuleFile.Type

export type PolicyLevel = PolicyConfig["default"]
export type OnFailure = (typeof OnFailureValues)[number]
export type ReplyIds = (typeof ReplyIdsValues)[number]

const extensionDefaults = Schema.decodeSync(ExtensionFile)({ name: "defaults", command: "defaults" })
const configDefaults = Schema.decodeSync(ConfigFile)({})

/** The defaults of docs/design.md#configuration, as the Schema decodes a file that leaves them out. */
export const Defaults = {
  timeout_ms: extensionDefaults.timeout_ms,
  startup_timeout_ms: extensionDefaults.startup_timeout_ms,
  grace_ms: extensionDefaults.grace_ms,
  on_failure: extensionDefaults.on_failure,
  reply_ids: extensionDefaults.reply_ids,
  max_rewrite_rounds: configDefaults.max_rewrite_rounds,
  builtin_tools: configDefaults.builtin_tools,
  policy: configDefaults.policy
}

/** The fields of an extension's config as given in code: everything but `name` and `command` may be left out. */
export type ExtensionConfigInput = Pick<ExtensionConfig, "name" | "command"> & Partial<ExtensionConfig>

/** An extension's config with the Schema's defaults filled in, for configs made in code (not read from a file). */
export const extensionConfig = (input: ExtensionConfigInput): ExtensionConfig => ({ ...extensionDefaults, ...input })

/**
 * The events an extension receives: its `events`, or when it names none, all of them (an MCP server's: the two it
 * answers, list_tools and invoke_tool).
 */
export const eventsOf = (config: Pick<ExtensionConfig, "events" | "protocol">): ReadonlyArray<EventName> =>
  config.events.length > 0
    ? config.events
    : config.protocol === "mcp"
      ? (McpProtocolEvents as ReadonlyArray<EventName>)
      : EventNames
