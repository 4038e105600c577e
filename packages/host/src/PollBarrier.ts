import { performance } from "node:perf_hooks"

/**
 * Runs a task once the event loop has polled for I/O since the task was queued: every read callback for bytes that
 * were already in a pipe when the task was queued has run by then. The process transport writes each request
 * through it (docs/design.md#attribution): whatever an extension wrote before the request existed is read, and
 * attributed with nothing in flight, before the request is written, even when the event loop was held up and would
 * otherwise deliver those bytes after the write.
 *
 * This replaced a synchronous read of each pipe before each write (`fs.readSync` on the non-blocking fd): an empty
 * pipe answers EAGAIN, which Node throws as an Error, 2.5–11 µs per extension per request in the dispatch loop. One
 * poll serves every request queued before it, so a round to 8 extensions pays one turn of the loop instead of 8
 * throws (docs/benchmarks.md), and no private Node handle is needed to find the fd.
 *
 * How it knows a poll happened: libuv counts loop iterations and increments the count right before it polls
 * (`performance.nodeTiming.uvMetricsInfo.loopCount`). A task runs from an immediate (the check phase, after the
 * poll) once the count has moved past the one seen when it was queued. Queued from an immediate or a timer, the
 * next iteration's poll is enough: one turn. Queued from a read callback (the poll phase, where an agent chaining
 * dispatches usually is: a fiber waiting for a reply resumes inside the read callback that delivers it), this
 * iteration's poll came before it: two immediates and one turn. Without the count (another runtime), every task
 * waits two turns, which always contain a poll.
 */

type LoopCount = () => number

const loopCountOf = (): LoopCount | undefined => {
  try {
    const timing: unknown = performance.nodeTiming
    const read = () => {
      const info: unknown =
        typeof timing === "object" && timing !== null ? Reflect.get(timing, "uvMetricsInfo") : undefined
      const count: unknown = typeof info === "object" && info !== null ? Reflect.get(info, "loopCount") : undefined
      return typeof count === "number" ? count : Number.NaN
    }
    return Number.isFinite(read()) ? read : undefined
  } catch {
    return undefined
  }
}

/** A barrier over the event loop. `loopCount` is for tests (a count that never moves makes tasks wait). */
export const make = (loopCount: LoopCount | undefined = loopCountOf()) => {
  // Parallel arrays rather than an object per task: a round to N extensions queues N tasks per dispatch.
  let tasks: Array<() => void> = []
  /** Per task: the loop count when it was queued; without a count, the turns it still has to wait. */
  let marks: Array<number> = []
  let scheduled = false

  // The count cannot move while JavaScript runs (libuv counts between its phases), so one reading serves every
  // task queued before the next microtask checkpoint: one reading per round, not one per extension.
  let cached = -1
  const forget = () => {
    cached = -1
  }
  const countNow = (count: LoopCount): number => {
    if (cached < 0) {
      cached = count()
      queueMicrotask(forget)
    }
    return cached
  }

  const isDue = (mark: number, now: number) => (loopCount === undefined ? mark <= 1 : mark < now)

  const runDue = (): void => {
    scheduled = false
    const now = loopCount === undefined ? Number.NaN : loopCount()
    // The due tasks are the oldest ones, a prefix of the queue: the count only grows, and without it older tasks
    // have fewer turns left.
    let dueCount = 0
    while (dueCount < marks.length && isDue(marks[dueCount] ?? 0, now)) dueCount++
    let due: ReadonlyArray<() => void> = tasks
    if (dueCount === tasks.length) {
      tasks = []
      marks = []
    } else {
      // Queued after this turn's poll (from a read callback, usually every one of them): they wait for the next
      // poll, in the order queued. Without a count, each has one turn less to wait.
      due = tasks.slice(0, dueCount)
      if (dueCount > 0) {
        tasks = tasks.slice(dueCount)
        marks = marks.slice(dueCount)
      }
      if (loopCount === undefined) marks = marks.map((mark) => mark - 1)
      schedule()
    }
    // Each task is the caller's, and must not throw (the core's write catches its own defects); one that does
    // still leaves the others run and the barrier usable, and is then rethrown, as from any other callback.
    let failure: { readonly error: unknown } | undefined
    for (const task of due) {
      try {
        task()
      } catch (error) {
        failure ??= { error }
      }
    }
    if (failure !== undefined) throw failure.error
  }

  const schedule = (): void => {
    if (scheduled) return
    scheduled = true
    setImmediate(runDue)
  }

  return {
    /** Whether it knows the loop count (else every task waits two turns). */
    usesLoopCount: loopCount !== undefined,
    /** Run `task` after the event loop's next poll for I/O (see above). */
    afterPoll: (task: () => void): void => {
      tasks.push(task)
      marks.push(loopCount === undefined ? 2 : countNow(loopCount))
      schedule()
    }
  }
}

/** The process's barrier: one event loop, so one barrier; every extension's writes share its turns. */
export const afterPoll = make().afterPoll
