/**
 * A thrown or rejected value as text for the log, whatever it is: never throws. A handler may throw a value
 * `String()` cannot convert (`Object.create(null)`, a `toString` or getter that throws, a Proxy whose traps
 * throw); if describing it threw, the request would go unanswered and the extension would end, its guard lost.
 */
export const describe = (error: unknown): string => {
  try {
    if (error instanceof Error) {
      const stack: unknown = error.stack
      if (typeof stack === "string") return stack
      const name: unknown = error.name
      const message: unknown = error.message
      return `${typeof name === "string" ? name : "Error"}: ${typeof message === "string" ? message : String(message)}`
    }
    return String(error)
  } catch {
    return `a ${kind(error)} that cannot be shown (converting it to text threw)`
  }
}

/** What `error` is, from `typeof` alone (which never runs the value's code). */
const kind = (error: unknown): string => (typeof error === "object" ? "thrown object" : `thrown ${typeof error}`)
