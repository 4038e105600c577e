import { fileURLToPath } from "node:url"

/**
 * The extension processes the benchmarks run, as command + args. Both sides start them with this very Node
 * binary (`process.execPath`), so neither pays for a shim or a different Node.
 */
export interface ExtensionCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
}

const file = (name: string) => fileURLToPath(new URL(`./extensions/${name}`, import.meta.url))

/** Reads a line, writes `{}`. */
export const noop: ExtensionCommand = { command: process.execPath, args: [file("noop.mjs")] }

/** Replies `{}` to tool_call after `ms` milliseconds, at once to anything else. */
export const sleeping = (ms: number): ExtensionCommand => ({ command: process.execPath, args: [file("sleep.mjs"), String(ms)] })

/** `Extension.main({})` from @abhed/extension: the SDK's no-op. */
export const sdkNoop: ExtensionCommand = { command: process.execPath, args: [file("sdk-noop.ts")] }

/** `Extension.main({})` from the built @abhed/extension (`pnpm build` first): the SDK's no-op as installed. */
export const sdkNoopBuilt: ExtensionCommand = { command: process.execPath, args: [file("sdk-noop-built.mjs")] }

/** The built SDK's entry point, which `sdkNoopBuilt` needs. */
export const builtSdk: string = fileURLToPath(new URL("../../extension/dist/index.js", import.meta.url))

/** The directory extension paths resolve against (the host's `baseDir`). */
export const extensionsDir: string = fileURLToPath(new URL("./extensions/", import.meta.url))
