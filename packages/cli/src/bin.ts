import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { main } from "./Cli.ts"

// `pnpm abhed-ext …` / `node packages/cli/src/bin.ts …`: exit codes come from the failure (see CliError.ts).
NodeRuntime.runMain(main)
