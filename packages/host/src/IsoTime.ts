/**
 * A time as `Date.prototype.toISOString` writes it (`2026-12-01T22:10:00.123Z`), for the audit record's `time`. The
 * date and time of day up to the second are made once per second: `toISOString` measured at several times the cost
 * of building the rest of a dispatch's record. Outside the years 1970-9999, or for a fractional millisecond, it is
 * `toISOString` itself.
 */
const FastUntil = Date.UTC(10000, 0, 1)

let second = Number.NaN
let prefix = ""

export const isoTime = (millis: number): string => {
  if (!(millis >= 0 && millis < FastUntil && Number.isInteger(millis))) return new Date(millis).toISOString()
  const s = Math.floor(millis / 1000)
  if (s !== second) {
    // "YYYY-MM-DDTHH:MM:SS." of this second.
    prefix = new Date(s * 1000).toISOString().slice(0, 20)
    second = s
  }
  const ms = millis - s * 1000
  return `${prefix}${ms < 10 ? "00" : ms < 100 ? "0" : ""}${ms}Z`
}
