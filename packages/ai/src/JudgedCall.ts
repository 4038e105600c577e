import { Context } from "effect"

/**
 * The call a guarded toolkit is running: the tool and the SETTLED args (encoded, as the extensions last saw them).
 * `GuardedToolkit` provides it to the handler of every call it lets run, and to nothing else, so a handler that must
 * never run unjudged (an extension tool's, which invokes its owner) can check that its params are exactly these.
 */
export class JudgedCall extends Context.Service<
  JudgedCall,
  {
    readonly tool: string
    readonly args: unknown
  }
>()("@abhed/ai/JudgedCall") {}
