/**
 * Where and how the host exports its telemetry, read from the standard OpenTelemetry environment variables. Pure:
 * a bad value is a warning that names the variable and says what was done instead, never a failure (telemetry must
 * never keep a session from starting).
 */
export type OtlpProtocol = "http/protobuf" | "http/json"
export type Signal = "traces" | "metrics" | "logs"
export const Signals: ReadonlyArray<Signal> = ["traces", "metrics", "logs"]

export interface TelemetrySettings {
  /** The full URL per signal (`…/v1/traces`); a signal without one is not exported. */
  readonly endpoints: { readonly [S in Signal]?: string | undefined }
  readonly protocol: { readonly [S in Signal]: OtlpProtocol }
  /** Sent with every signal's requests. */
  readonly headers: Readonly<Record<string, string>>
  /** A signal's own (`OTEL_EXPORTER_OTLP_TRACES_HEADERS`, …): over `headers`, key by key, for that signal alone. */
  readonly signalHeaders?: { readonly [S in Signal]?: Readonly<Record<string, string>> } | undefined
  readonly serviceName: string
  readonly resourceAttributes: Readonly<Record<string, string>>
  /**
   * `"digest"` (default): a tool call's args leave the host only as `{sha256, bytes}`; `"full"`: verbatim, as
   * `gen_ai.tool.call.arguments` (the operator opted in: args can hold secrets).
   */
  readonly args: "digest" | "full"
  /** The most one export request may take, and so what the session's end waits for the last batch. */
  readonly timeoutMillis: number
  /** Items per export request; at most four batches of them wait per signal (more are dropped, and counted). */
  readonly maxBatchSize: number
  /** How often buffered items are sent. */
  readonly intervalMillis: number
}

export interface TelemetryFromEnv {
  /** Undefined: nothing to export (no endpoint, or `OTEL_SDK_DISABLED=true`). */
  readonly settings: TelemetrySettings | undefined
  readonly warnings: ReadonlyArray<string>
}

export const DefaultServiceName = "abhed"
/** Lower than the OpenTelemetry default (10 s): a session's end (a CLI's exit) waits at most this long. */
export const DefaultTimeoutMillis = 2000
export const DefaultMaxBatchSize = 512
export const DefaultIntervalMillis = 1000

type Env = Readonly<Record<string, string | undefined>>

const set = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim()
  return value === undefined || value === "" ? undefined : value
}

/**
 * An endpoint as a warning shows it: without a password or a query (`https://user:…@host/?…`), where a credential
 * may sit.
 */
const shown = (text: string): string => text.replace(/^([^/]*\/\/)[^/@?#]*@/, "$1…@").replace(/\?.*$/s, "?…")

const url = (text: string): URL | undefined => {
  try {
    const parsed = new URL(text)
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed : undefined
  } catch {
    return undefined
  }
}

/** `text` percent-decoded, or undefined when it is not validly encoded. */
const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** What HTTP allows a header's name and value to be (as Node checks them when a request is made). */
const HeaderName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const HeaderValue = /^[\t\x20-\x7e\x80-\xff]*$/

/**
 * A `key=value,key=value` list (W3C baggage style, values percent-encoded); a bad entry is skipped with a warning.
 * `secret`: the entries may hold credentials (headers), so a warning names an entry by its position, or by its key
 * once that is a valid header name, never by its value; and an entry HTTP cannot carry is skipped here, not left to
 * fail every request.
 */
const keyValues = (env: Env, name: string, warnings: Array<string>, secret: boolean): Record<string, string> => {
  const out: Record<string, string> = {}
  const text = set(env, name)
  if (text === undefined) return out
  text.split(",").forEach((entry, i) => {
    if (entry.trim() === "") return
    const eq = entry.indexOf("=")
    const raw = eq < 0 ? "" : entry.slice(0, eq).trim()
    const at = secret ? `entry ${i + 1}` : `entry "${entry.trim()}"`
    if (raw === "") return warnings.push(`${name}: ${at} is not key=value: skipped`)
    const key = decoded(raw)
    if (key === undefined || (secret && !HeaderName.test(key)))
      return warnings.push(`${name}: ${at} does not start with a valid ${secret ? "header name" : "key"}: skipped`)
    const value = decoded(entry.slice(eq + 1).trim())
    if (value === undefined) return warnings.push(`${name}: entry "${key}" is not validly percent-encoded: skipped`)
    if (secret && !HeaderValue.test(value))
      return warnings.push(
        `${name}: entry "${key}" holds what a header cannot (a line break, a control character, a character past U+00FF): skipped`
      )
    out[key] = value
  })
  return out
}

const positiveInt = (env: Env, name: string, fallback: number, warnings: Array<string>): number => {
  const text = set(env, name)
  if (text === undefined) return fallback
  const n = Number(text)
  if (Number.isInteger(n) && n > 0) return n
  warnings.push(`${name}: "${text}" is not a positive integer: using ${fallback}`)
  return fallback
}

const protocolOf = (env: Env, name: string, fallback: OtlpProtocol, warnings: Array<string>): OtlpProtocol => {
  const text = set(env, name)
  if (text === undefined) return fallback
  if (text === "http/protobuf" || text === "http/json") return text
  warnings.push(`${name}: "${text}" is not supported (http/protobuf, http/json): using ${fallback}`)
  return fallback
}

/** `OTEL_TRACES_EXPORTER` and its kin: `otlp` (the default) exports the signal, `none` (or anything else) does not. */
const exporterWanted = (env: Env, signal: Signal, warnings: Array<string>): boolean => {
  const name = `OTEL_${signal.toUpperCase()}_EXPORTER`
  const text = set(env, name)
  if (text === undefined) return true
  const names = text.split(",").map((n) => n.trim().toLowerCase())
  const others = names.filter((n) => n !== "otlp" && n !== "none" && n !== "")
  const otlp = names.includes("otlp")
  if (others.length > 0) {
    const what = others.map((n) => `"${n}"`).join(", ")
    warnings.push(
      `${name}: ${what} not supported (otlp, none): ${signal} ${otlp ? "exported over OTLP alone" : "not exported"}`
    )
  }
  return otlp
}

/** What the standard has that this exporter does not do, and what it does instead. */
const Unsupported: ReadonlyArray<readonly [string, string]> = [
  ["CERTIFICATE", "the system's CAs verify the collector (a private CA: NODE_EXTRA_CA_CERTS=FILE)"],
  ["CLIENT_CERTIFICATE", "no client certificate is sent"],
  ["CLIENT_KEY", "no client certificate is sent"],
  ["COMPRESSION", "requests are sent uncompressed"]
]

/** A standard variable set that is not supported is a warning once something is exported: it was set for a reason. */
const unsupported = (env: Env, warnings: Array<string>): void => {
  const prefixes = ["OTEL_EXPORTER_OTLP", ...Signals.map((s) => `OTEL_EXPORTER_OTLP_${s.toUpperCase()}`)]
  for (const prefix of prefixes) {
    for (const [suffix, instead] of Unsupported) {
      const value = set(env, `${prefix}_${suffix}`)
      if (value === undefined || (suffix === "COMPRESSION" && value.toLowerCase() === "none")) continue
      warnings.push(`${prefix}_${suffix}: not supported: ${instead}`)
    }
  }
  for (const signal of Signals) {
    const name = `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_TIMEOUT`
    if (set(env, name) !== undefined)
      warnings.push(`${name}: not supported per signal: OTEL_EXPORTER_OTLP_TIMEOUT bounds every request`)
  }
}

/** The settings the variables of `env` describe (`process.env` for the CLI). */
export const fromEnv = (env: Env): TelemetryFromEnv => {
  const warnings: Array<string> = []
  const disabledText = set(env, "OTEL_SDK_DISABLED")
  const disabled = disabledText?.toLowerCase() === "true"
  if (disabledText !== undefined && !disabled && disabledText.toLowerCase() !== "false") {
    warnings.push(`OTEL_SDK_DISABLED: "${disabledText}" is neither true nor false: telemetry stays on`)
  }
  const endpoints: { [S in Signal]?: string } = {}
  const baseText = set(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
  const base = baseText === undefined ? undefined : url(baseText)
  if (baseText !== undefined && base === undefined) {
    warnings.push(`OTEL_EXPORTER_OTLP_ENDPOINT: "${shown(baseText)}" is not an http(s) URL: ignored`)
  }
  for (const signal of Signals) {
    const name = `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`
    const own = set(env, name)
    if (!exporterWanted(env, signal, warnings)) continue
    if (own !== undefined) {
      // A signal's own endpoint is used as it is; the base one gets the signal's path appended.
      if (url(own) !== undefined) endpoints[signal] = own
      else warnings.push(`${name}: "${shown(own)}" is not an http(s) URL: ${signal} not exported`)
    } else if (base !== undefined) {
      const u = new URL(base.href)
      u.pathname = `${u.pathname.replace(/\/$/, "")}/v1/${signal}`
      endpoints[signal] = u.href
    }
  }
  const baseProtocol = protocolOf(env, "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", warnings)
  const protocol = {
    traces: protocolOf(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", baseProtocol, warnings),
    metrics: protocolOf(env, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", baseProtocol, warnings),
    logs: protocolOf(env, "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", baseProtocol, warnings)
  }
  const headers = keyValues(env, "OTEL_EXPORTER_OTLP_HEADERS", warnings, true)
  const signalHeaders: { [S in Signal]?: Record<string, string> } = {}
  for (const signal of Signals) {
    const own = keyValues(env, `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_HEADERS`, warnings, true)
    if (Object.keys(own).length > 0) signalHeaders[signal] = own
  }
  const resourceAttributes = keyValues(env, "OTEL_RESOURCE_ATTRIBUTES", warnings, false)
  const serviceName = set(env, "OTEL_SERVICE_NAME") ?? resourceAttributes["service.name"] ?? DefaultServiceName
  const argsText = set(env, "ABHED_OTEL_ARGS")
  if (argsText !== undefined && argsText !== "digest" && argsText !== "full") {
    warnings.push(`ABHED_OTEL_ARGS: "${argsText}" is neither digest nor full: using digest`)
  }
  const settings: TelemetrySettings = {
    endpoints,
    protocol,
    headers,
    ...(Object.keys(signalHeaders).length > 0 ? { signalHeaders } : {}),
    serviceName,
    resourceAttributes,
    args: argsText === "full" ? "full" : "digest",
    timeoutMillis: positiveInt(env, "OTEL_EXPORTER_OTLP_TIMEOUT", DefaultTimeoutMillis, warnings),
    maxBatchSize: positiveInt(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", DefaultMaxBatchSize, warnings),
    intervalMillis: positiveInt(env, "OTEL_BSP_SCHEDULE_DELAY", DefaultIntervalMillis, warnings)
  }
  const exported = !disabled && Signals.some((s) => endpoints[s] !== undefined)
  if (exported) unsupported(env, warnings)
  return { settings: exported ? settings : undefined, warnings }
}

/** The headers of `signal`'s requests: its own over the common ones. */
export const headersOf = (settings: TelemetrySettings, signal: Signal): Readonly<Record<string, string>> => {
  const own = settings.signalHeaders?.[signal]
  return own === undefined ? settings.headers : { ...settings.headers, ...own }
}

/** Settings for one collector at `baseUrl` (`http://host:4318`), the rest defaulted: for embedders and tests. */
export const forEndpoint = (
  baseUrl: string,
  options?: Partial<Omit<TelemetrySettings, "endpoints" | "protocol">> & { readonly protocol?: OtlpProtocol }
): TelemetrySettings => {
  const root = baseUrl.replace(/\/$/, "")
  const protocol = options?.protocol ?? "http/protobuf"
  return {
    headers: {},
    serviceName: DefaultServiceName,
    resourceAttributes: {},
    args: "digest",
    timeoutMillis: DefaultTimeoutMillis,
    maxBatchSize: DefaultMaxBatchSize,
    intervalMillis: DefaultIntervalMillis,
    ...options,
    endpoints: { traces: `${root}/v1/traces`, metrics: `${root}/v1/metrics`, logs: `${root}/v1/logs` },
    protocol: { traces: protocol, metrics: protocol, logs: protocol }
  }
}
