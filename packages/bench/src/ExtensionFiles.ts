import { fileURLToPath } from "node:url"

/**
 * The extension processes the benchmarks run, as command + args. Both sides start them with this very Node
 * binary (`process.execPath`), so neither pays for a shim or a different Node.
 */
export interface ExtensionCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The host's `reply_ids` for it (the extension echoes ids); default "optional". */
  readonly replyIds?: "optional" | "required"
}

const file = (name: string) => fileURLToPath(new URL(`./extensions/${name}`, import.meta.url))

/** Reads a line, writes `{}`. */
export const noop: ExtensionCommand = { command: process.execPath, args: [file("noop.mjs")] }

/** Reads a line, writes `{"id": <its id>}`; run with `reply_ids: "required"`. */
export const noopIds: ExtensionCommand = {
  command: process.execPath,
  args: [file("noop-ids.mjs")],
  replyIds: "required"
}

/** Replies `{}` to tool_call after `ms` milliseconds, at once to anything else. */
export const sleeping = (ms: number): ExtensionCommand => ({
  command: process.execPath,
  args: [file("sleep.mjs"), String(ms)]
})

/** `Extension.main({})` from @abhed/extension: the SDK's no-op. */
export const sdkNoop: ExtensionCommand = { command: process.execPath, args: [file("sdk-noop.ts")] }

/** `Extension.main({})` from the built @abhed/extension (`pnpm build` first): the SDK's no-op as installed. */
export const sdkNoopBuilt: ExtensionCommand = { command: process.execPath, args: [file("sdk-noop-built.mjs")] }

/** The built SDK's entry point, which `sdkNoopBuilt` needs. */
export const builtSdk: string = fileURLToPath(new URL("../../extension/dist/index.js", import.meta.url))

/** A Claude Code PreToolUse command hook (bash): what a peer spawns once per event. */
export const claudeHook: ExtensionCommand = { command: "bash", args: [file("hook-allow.sh")] }

/** The same hook run as an extension through `abhed-ext hook` (packages/cli), started by this Node. */
export const claudeHookAdapter: ExtensionCommand = {
  command: process.execPath,
  args: [
    fileURLToPath(new URL("../../cli/src/bin.ts", import.meta.url)),
    "hook",
    "--format",
    "claude",
    "--",
    claudeHook.command,
    ...claudeHook.args
  ]
}

/** The directory extension paths resolve against (the host's `baseDir`). */
export const extensionsDir: string = fileURLToPath(new URL("./extensions/", import.meta.url))
