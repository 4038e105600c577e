import { afterEach } from "vitest"

/**
 * Processes a test leaves out of the host's reach (a helper that left its group with setsid, a child of a process the
 * test killed with SIGKILL): push their pids, and each is SIGKILLed after the test, passing or not.
 */
export const killedAfterEach = (): Array<number> => {
  const pids: Array<number> = []
  afterEach(() => {
    for (const pid of pids.splice(0)) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
  })
  return pids
}
