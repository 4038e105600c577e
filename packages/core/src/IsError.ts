import type { ToolResultReply } from "@abhed/protocol"
import { Boolean as Bool, type Reducer } from "effect"
import type { Named } from "./Named.ts"

/**
 * `tool_result` is_error is OR (docs/design.md#combination): an extension may raise it, never lower it.
 * `is_error: false` in a reply therefore changes nothing; it cannot hide a failure from the model.
 */
export const IsErrorReducer: Reducer.Reducer<boolean> = Bool.ReducerOr

export const combineIsError = (original: boolean, replies: ReadonlyArray<Named<ToolResultReply>>): boolean =>
  IsErrorReducer.combineAll([original, ...replies.map((r) => r.value.is_error === true)])
