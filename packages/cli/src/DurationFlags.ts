import { Flag } from "effect/cli"

/** Checks for millisecond flags: a reply cannot arrive in zero time, and nothing can be waited for a negative time. */
export const positive = Flag.filter(
  (n: number) => n > 0,
  () => "a positive number of milliseconds"
)
export const nonNegative = Flag.filter(
  (n: number) => n >= 0,
  () => "0 or more milliseconds"
)
