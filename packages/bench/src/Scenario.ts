import type { Plan } from "./Plan.ts"
import type { Row } from "./Report.ts"

/** One benchmark scenario: sets up both sides, measures them interleaved, tears down, returns its rows. */
export interface Scenario {
  readonly title: string
  readonly run: (plan: Plan, progress: (message: string) => void) => Promise<ReadonlyArray<Row>>
}
