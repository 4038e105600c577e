// A registry for the @abhed scope only, serving the tarballs `pnpm pack` made, so the pack test can run the
// README's install lines exactly as written (`npm install @abhed/cli@0.1.0 …`): npm is pointed at it for @abhed
// (`@abhed:registry=` in a user config) and gets everything else (effect, node, …) from the real registry.
// Usage: node registry.mjs DIR_OF_TGZ; prints the port on stdout once listening, serves until killed.
// Plain JavaScript for any Node that runs npm (the machine's own, 20 here).
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import { join } from "node:path"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: node registry.mjs DIR_OF_TGZ")

/** name → { manifest, file, bytes } for every tarball in dir. */
const packages = new Map()
for (const file of readdirSync(dir).filter((f) => f.endsWith(".tgz"))) {
  const bytes = readFileSync(join(dir, file))
  const manifest = JSON.parse(
    execFileSync("tar", ["-xOzf", join(dir, file), "package/package.json"], { encoding: "utf8" })
  )
  packages.set(manifest.name, { manifest, file, bytes })
}

const server = createServer((req, res) => {
  const path = decodeURIComponent((req.url ?? "/").split("?")[0] ?? "/")
  const tarball = /^\/-\/(.+\.tgz)$/.exec(path)
  if (tarball !== null) {
    const found = [...packages.values()].find((p) => p.file === tarball[1])
    if (found === undefined) return void res.writeHead(404).end()
    return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(found.bytes)
  }
  const found = packages.get(path.slice(1))
  if (found === undefined)
    return void res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}')
  const { bytes, file, manifest } = found
  const base = `http://127.0.0.1:${server.address().port}`
  const version = {
    ...manifest,
    _id: `${manifest.name}@${manifest.version}`,
    dist: {
      tarball: `${base}/-/${file}`,
      shasum: createHash("sha1").update(bytes).digest("hex"),
      integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`
    }
  }
  res.writeHead(200, { "content-type": "application/json" }).end(
    JSON.stringify({
      _id: manifest.name,
      name: manifest.name,
      "dist-tags": { latest: manifest.version },
      versions: { [manifest.version]: version }
    })
  )
})
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`))
