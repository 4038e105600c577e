import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { check } from "./CheckCommand.ts"

export const Version = "0.1.0"

/** `abhed-ext`: run, check, demo. With no subcommand it runs the demo. */
export const cli = Command.make("abhed-ext").pipe(
  Command.withDescription("Run, check and demo Abhed extensions."),
  Command.withSubcommands([check])
)

export const main = Command.run(cli, { version: Version }).pipe(Effect.provide(NodeServices.layer))
