import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"

/**
 * A program a project ships with mode 0111 (run, never read) has no bytes to fingerprint: what stands in for them must
 * change when the program does, or a trusted project's program could be swapped unseen. Run as a user who cannot read
 * it: another user (65534, through `setpriv`) when the suite runs as root, since root reads any file; the file's owner
 * otherwise (mode 0111 keeps its owner out too).
 */

const probe = NodePath.join(import.meta.dirname, "..", "fixtures", "fingerprint-probe.ts")
const asRoot = process.getuid?.() === 0
// Under /tmp, not the run's temporary folder (mode 0700, which another user cannot enter); removed at the end.
const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(asRoot ? "/tmp" : NodeOs.tmpdir(), "abhed-0111-")))
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

interface Probed {
  readonly fingerprint: string
  readonly scripts: ReadonlyArray<{ readonly path: string; readonly sha256: string | null; readonly readable: boolean }>
}

const fingerprint = (): Probed => {
  const [command, args] = asRoot
    ? ["setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, probe, root]]
    : [process.execPath, [probe, root]]
  // No compile cache: its folder is not the other user's to write.
  const { NODE_COMPILE_CACHE: _, ...env } = process.env
  const r = NodeChildProcess.spawnSync(command, args, { encoding: "utf8", env, cwd: root })
  expect(r.status, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as Probed
}

describe("trust: a program that cannot be read", () => {
  it("mode 0111: its stand-in digest is stable while it is unchanged, and changes when it is rewritten or replaced", () => {
    NodeFs.chmodSync(root, 0o755)
    const abhed = NodePath.join(root, ".abhed")
    NodeFs.mkdirSync(abhed, { mode: 0o755 })
    const config = { extensions: [{ name: "guard", command: "./guard", args: [], cwd: ".." }] }
    NodeFs.writeFileSync(NodePath.join(abhed, "abhed.json"), JSON.stringify(config), { mode: 0o644 })
    const program = NodePath.join(root, "guard")
    NodeFs.writeFileSync(program, "the trusted program", { mode: 0o111 })
    NodeFs.chmodSync(program, 0o111)

    const first = fingerprint()
    expect(first.scripts).toEqual([{ path: "guard", sha256: expect.any(String), readable: false }])
    expect(fingerprint().fingerprint).toBe(first.fingerprint)

    // Rewritten in place, as long as before: same inode, same size.
    NodeFs.chmodSync(program, 0o700)
    NodeFs.writeFileSync(program, "the swapped program")
    NodeFs.chmodSync(program, 0o111)
    const rewritten = fingerprint()
    expect(rewritten.scripts[0]?.readable).toBe(false)
    expect(rewritten.fingerprint).not.toBe(first.fingerprint)

    // Replaced by another file under its name.
    NodeFs.writeFileSync(`${program}.new`, "another program", { mode: 0o111 })
    NodeFs.chmodSync(`${program}.new`, 0o111)
    NodeFs.renameSync(`${program}.new`, program)
    expect(fingerprint().fingerprint).not.toBe(rewritten.fingerprint)
  })
})
