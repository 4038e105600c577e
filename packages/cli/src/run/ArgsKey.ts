import { canonicalJson, type JsonObject, MaxJsonDepth, nestedDeeperThan } from "@abhed/protocol"

/**
 * A call's args as a key (CallIds.ts pairs results by it, JudgedCalls.ts finds the call an invoke is for): canonical
 * JSON (keys sorted), so key order, `1e0` and `1`, `"\u002f"` and `"/"` make no difference, and a number JSON cannot
 * hold (`1e400`, parsed as Infinity) is the `null` an extension reads. Undefined for args nested deeper than a request
 * may: the host sends those to no one (it refuses them itself), and their text would overflow the stack.
 */
export const argsKey = (args: JsonObject): string | undefined =>
  nestedDeeperThan(args, MaxJsonDepth) ? undefined : canonicalJson(args)
