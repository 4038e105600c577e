import { Context, type Schema } from "effect"

/**
 * A tool annotation: the Schema the model's args are checked against before anything is sent, when it is not the
 * tool's parameter Schema (an extension tool's parameters are its declared JSON Schema, which effect/ai shows the
 * model but does not check; this is that schema compiled).
 */
export class ArgsSchema extends Context.Service<ArgsSchema, Schema.Top>()("@abhed/ai/ArgsSchema") {}
