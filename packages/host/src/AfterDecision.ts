/**
 * Telemetry's share of a dispatch that can wait until the decision is handed back: the record handed to the
 * exporting sink, the dispatch's span ended, its exchanges' child spans recorded. What is queued here runs in one
 * turn of the event loop of its own (`setImmediate`), after the caller has its answer, while the host waits for its
 * next event or reply; everything it reads was fixed at the decision (the times included). The work is the same,
 * only later: over in-process fakes a dispatch's p50 with export on went from 1.54–1.60× to 1.26–1.28× of off's
 * (docs/benchmarks.md, scenario 12; a host saturated with dispatches still pays it, in the next one).
 * `runAfterDecision` runs what waits at once: the session's end calls it before its last flush.
 */

let due: Array<() => void> = []

/**
 * At most this many tasks wait: dispatches that never let the event loop turn (no I/O, no yield: `Effect.runSync` in
 * a loop) would otherwise hold every record of the loop. The task that finds the queue full runs it at once, in order.
 */
export const AfterDecisionCap = 1024

/** Runs what waits now, in the order it was queued; one that throws costs itself alone. */
export const runAfterDecision = (): void => {
  while (due.length > 0) {
    const now = due
    due = []
    for (const task of now) {
      try {
        task()
      } catch {
        // Telemetry never fails a session: what could not be recorded is lost to telemetry alone.
      }
    }
  }
}

/** Queues `task` for the turn after the decision (one `setImmediate` for every task queued before it runs). */
export const afterDecision = (task: () => void): void => {
  const waiting = due.push(task)
  if (waiting === 1) setImmediate(runAfterDecision)
  else if (waiting >= AfterDecisionCap) runAfterDecision()
}
