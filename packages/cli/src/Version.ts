import { readFileSync } from "node:fs"

/** The version in this package's package.json (one directory up from both src/ and dist/). */
export const Version: string = ((): string => {
  const manifest: unknown = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
  return typeof manifest === "object" &&
    manifest !== null &&
    "version" in manifest &&
    typeof manifest.version === "string"
    ? manifest.version
    : "unknown"
})()
