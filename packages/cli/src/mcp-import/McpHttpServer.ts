import { looksLikeSecretName } from "@abhed/host/ExtensionEnvironment"
import { isJsonObject } from "@abhed/protocol"
import { Result } from "effect"
import type { HookFormat } from "../hook/HookFormat.ts"
import { textOf } from "./McpFile.ts"
import {
  braced,
  hasLiteralDefault,
  hasRefs,
  looksLikeSecretValue,
  piecesOf,
  refsOf,
  secretQueryParameter,
  withDefaults
} from "./McpReferences.ts"

/** What a streamable HTTP server's entry becomes: the adapter's `--url` and `--header` flags. */
export interface HttpServer {
  readonly adapterArgs: ReadonlyArray<string>
  readonly passthrough: ReadonlySet<string>
  readonly warnings: ReadonlyArray<string>
}

/** An HTTP header name (RFC 9110 token). */
const HeaderName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

const isSecretHeader = (name: string): boolean =>
  looksLikeSecretName(name.replaceAll("-", "_")) || /auth|cookie/i.test(name)

/** A variable to hold a withheld header value: `GITHUB_AUTHORIZATION`. */
const headerVariable = (server: string, header: string): string =>
  `${server}_${header}`
    .toUpperCase()
    .replace(/[^A-Z0-9_]+/g, "_")
    .replace(/^([^A-Z_])/, "_$1")

/**
 * A server's `url` and `headers` (`key`: its name in the file), or why it is not carried over. References stay
 * references (the adapter reads them when it starts); a password or credential in the url is refused, and a literal
 * credential in a header is withheld and sent from a variable instead.
 */
export const httpServer = (
  format: HookFormat,
  key: string,
  url: string,
  entry: Record<string, unknown>
): Result.Result<HttpServer, string> => {
  const warnings: Array<string> = []
  const passthrough = new Set<string>()
  const adapterArgs: Array<string> = []
  const urlPieces = piecesOf(format, url)
  // The adapter reads the references when it starts; what is checked here is the text around them.
  const withRefs = (stand: string) => urlPieces.map((p) => (p._tag === "Text" ? p.text : stand)).join("")
  const placed = URL.parse(withRefs("x"))
  if (placed === null) return Result.fail(`url ${JSON.stringify(url)} is not a URL`)
  if (placed.protocol !== "http:" && placed.protocol !== "https:")
    return Result.fail(`url ${JSON.stringify(url)} is not http: or https:`)
  // User info (`user:password@`, `token@`) is a credential, and fetch refuses a URL that holds it: never a config's.
  if (looksLikeSecretValue(urlPieces) || placed.username !== "" || placed.password !== "") {
    return Result.fail(
      "its url holds a user name or password (user:password@): it is not copied into a config; send the credential in a header, from a variable"
    )
  }
  // As sent when its variables are unset: a default (`?api_key=${KEY:-abc}`) is as literal as the text around it.
  const query = secretQueryParameter(withDefaults(urlPieces), looksLikeSecretName)
  if (query !== undefined) {
    return Result.fail(
      `its url carries a credential in "${query}": it is not copied into a config; write \${VAR} in its place`
    )
  }
  for (const ref of refsOf(urlPieces)) passthrough.add(ref)
  adapterArgs.push(`--url=${braced(urlPieces)}`)
  const headers = entry["headers"] ?? {}
  if (!isJsonObject(headers)) return Result.fail("headers: expected an object")
  const mcpNamePreview = key.replace(/[^A-Za-z0-9_-]/g, "_")
  for (const [name, raw] of Object.entries(headers)) {
    const at = `headers.${name}`
    const value = textOf(raw)
    if (value === undefined || !HeaderName.test(name) || /[\r\n\u0000]/.test(value)) {
      warnings.push(`${at}: not a valid header: left out`)
      continue
    }
    const pieces = piecesOf(format, value)
    const literal = !hasRefs(pieces) || hasLiteralDefault(pieces)
    if (looksLikeSecretValue(pieces) || (literal && value !== "" && isSecretHeader(name))) {
      const variable = headerVariable(mcpNamePreview, name)
      const scheme = /^\s*(Bearer|Basic|token)\s+/i.exec(value)?.[0].trimStart() ?? ""
      passthrough.add(variable)
      adapterArgs.push(`--header=${name}:${scheme}\${${variable}}`)
      warnings.push(
        `${at} holds a literal credential: it is not copied into the config; it is sent as ` +
          `${JSON.stringify(`${scheme}\${${variable}}`)}, so export ${variable} (${scheme === "" ? "the whole value" : `the value after "${scheme.trim()}"`}) where you run abhed`
      )
      continue
    }
    for (const ref of refsOf(pieces)) passthrough.add(ref)
    adapterArgs.push(`--header=${name}:${braced(pieces)}`)
  }
  return Result.succeed({ adapterArgs, passthrough, warnings })
}
