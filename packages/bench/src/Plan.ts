/**
 * How much each scenario runs: `full` for the recorded figures, `quick` (`--quick`) for CI (the whole run under
 * 60 s on a 2-core machine). Quick counts are smaller everywhere; scenario 5 says its counts in its name.
 */

export interface Loop {
  readonly warmup: number
  readonly iterations: number
}

export interface Plan {
  readonly mode: "quick" | "full"
  /** 1. sequential tool_call dispatches (per extension count). */
  readonly dispatch: Loop
  /** 2. fan-out to 8 sleeping extensions. */
  readonly fanOut: Loop
  readonly sleepMs: number
  /** 3. one large `context` request. */
  readonly largeContext: Loop
  readonly contextBytes: number
  /** 4. startup to ready. */
  readonly startup: Loop
  /** 5. memory: readings after `first` and after `total` dispatches. */
  readonly memory: { readonly first: number; readonly total: number }
  /** 6. spawn per event against the long-lived process. */
  readonly spawnPerEvent: Loop
  /** 9. a hook through `abhed-ext hook` against the same hook spawned per event (a spawn is noisy: more samples). */
  readonly hookAdapter: Loop
  /** 7. batches of concurrent dispatches. */
  readonly concurrent: Loop
  readonly inFlight: number
}

export const full: Plan = {
  mode: "full",
  dispatch: { warmup: 500, iterations: 5000 },
  fanOut: { warmup: 5, iterations: 100 },
  sleepMs: 50,
  largeContext: { warmup: 3, iterations: 40 },
  contextBytes: 8 * 1024 * 1024,
  startup: { warmup: 2, iterations: 20 },
  memory: { first: 10_000, total: 100_000 },
  spawnPerEvent: { warmup: 5, iterations: 100 },
  hookAdapter: { warmup: 10, iterations: 400 },
  concurrent: { warmup: 20, iterations: 300 },
  inFlight: 64
}

export const quick: Plan = {
  mode: "quick",
  dispatch: { warmup: 200, iterations: 1000 },
  fanOut: { warmup: 2, iterations: 20 },
  sleepMs: 50,
  largeContext: { warmup: 1, iterations: 8 },
  contextBytes: 8 * 1024 * 1024,
  startup: { warmup: 1, iterations: 5 },
  memory: { first: 1_000, total: 10_000 },
  spawnPerEvent: { warmup: 2, iterations: 20 },
  hookAdapter: { warmup: 5, iterations: 100 },
  concurrent: { warmup: 10, iterations: 50 },
  inFlight: 64
}
