import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import {
  describeChanges,
  fingerprintProject,
  loadConfig,
  readTrustStore,
  recordTrust,
  removeTrust,
  Trust,
  verdictOf
} from "../src/index.ts"

/** Trust bound to content: the fingerprint, what a change says, the store. */

const project = () => {
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-fp-")))
  const file = NodePath.join(root, ".abhed", "abhed.json")
  NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(root, ".abhed", "guard.py"), "print('hi')\n")
  const write = (value: unknown) => NodeFs.writeFileSync(file, JSON.stringify(value))
  const print = Effect.flatMap(loadConfig(file), (loaded) => fingerprintProject(root, loaded)).pipe(
    Effect.provide(NodeServices.layer)
  )
  return { root, file, write, print }
}
const guard = {
  name: "guard",
  command: "python3",
  args: ["guard.py", "--rules=../rules.txt", "-v"],
  env: { TOKEN: "a" }
}

describe("fingerprint", () => {
  it.effect("covers the named scripts inside the project (a missing one too), not the interpreter", () =>
    Effect.gen(function* () {
      const p = project()
      p.write({ extensions: [guard] })
      const print = yield* p.print
      assert.deepStrictEqual(
        print.extensions[0]?.scripts.map((s) => [s.path, s.sha256 === null]),
        [
          [".abhed/guard.py", false],
          ["rules.txt", true]
        ]
      )
      assert.deepStrictEqual(print.extensions[0]?.env_keys, ["TOKEN"])
    })
  )

  it.effect("formatting does not count; a script's byte, an env value, a new file named do, and say what", () =>
    Effect.gen(function* () {
      const p = project()
      p.write({ extensions: [guard] })
      const first = yield* p.print
      NodeFs.writeFileSync(p.file, JSON.stringify({ extensions: [guard] }, null, 4))
      assert.strictEqual((yield* p.print).fingerprint, first.fingerprint)

      NodeFs.appendFileSync(NodePath.join(p.root, ".abhed", "guard.py"), " ")
      const edited = yield* p.print
      assert.notStrictEqual(edited.fingerprint, first.fingerprint)
      assert.deepStrictEqual(
        describeChanges(first, edited).map((l) => l.replace(/\(sha256.*/u, "")),
        ["extension guard: script .abhed/guard.py changed "]
      )

      NodeFs.writeFileSync(NodePath.join(p.root, "rules.txt"), "x")
      assert.deepStrictEqual(describeChanges(edited, yield* p.print), ["extension guard: script rules.txt was created"])

      const before = yield* p.print
      p.write({
        extensions: [
          { ...guard, env: { TOKEN: "b", MORE: "1" }, command: "python3.12" },
          { name: "new", command: "true" }
        ]
      })
      assert.deepStrictEqual(describeChanges(before, yield* p.print), [
        'extension guard: command changed: "python3" -> "python3.12"',
        "extension guard: env keys changed: +MORE",
        "extension new is new"
      ])
      const two = yield* p.print
      p.write({
        extensions: [{ ...guard, env: { TOKEN: "c", MORE: "1" }, command: "python3.12" }],
        policy: { default: "deny" }
      })
      assert.deepStrictEqual(describeChanges(two, yield* p.print), [
        "the policy or another setting outside extensions changed",
        "extension new was removed",
        "extension guard: its settings changed (env values, events, timeouts, ...)"
      ])
    })
  )

  it.effect("a program found through a project entry on the extension's PATH is covered", () =>
    Effect.gen(function* () {
      const p = project()
      NodeFs.mkdirSync(NodePath.join(p.root, "bin"))
      NodeFs.writeFileSync(NodePath.join(p.root, "bin", "tool"), "#!/bin/sh\n")
      p.write({ extensions: [{ name: "t", command: "tool", env: { PATH: "../bin:/usr/bin" } }] })
      assert.deepStrictEqual(
        (yield* p.print).extensions[0]?.scripts.map((s) => s.path),
        ["bin/tool"]
      )
    })
  )
})

describe("trust store", () => {
  it.effect("records, matches, forgets; the file is 0600; a change is untrusted with what changed", () =>
    Effect.gen(function* () {
      const p = project()
      const store = NodePath.join(p.root, "config", "abhed", "trust.json")
      p.write({ extensions: [guard] })
      const print = yield* p.print
      assert.deepStrictEqual(verdictOf(yield* readTrustStore(store), print), {
        trusted: false,
        changes: ["this project's config has never been trusted"]
      })
      yield* recordTrust(store, print, new Date(0))
      assert.strictEqual(NodeFs.statSync(store).mode & 0o777, 0o600)
      assert.deepStrictEqual(verdictOf(yield* readTrustStore(store), print), { trusted: true })
      NodeFs.writeFileSync(NodePath.join(p.root, ".abhed", "guard.py"), "print('bye')\n")
      const verdict = yield* Trust.use((t) => t.check(print)).pipe(Effect.provide(Trust.layer(store)))
      assert.isTrue(verdict.trusted)
      const changed = yield* Trust.use((t) => p.print.pipe(Effect.flatMap(t.check))).pipe(
        Effect.provide(Trust.layer(store))
      )
      assert.isFalse(changed.trusted)
      assert.include(changed.trusted ? "" : changed.changes.join("\n"), "script .abhed/guard.py changed")
      assert.isTrue(yield* removeTrust(store, p.root))
      assert.isFalse(yield* removeTrust(store, p.root))
    })
  )

  it.effect("a corrupt store trusts nothing and says why; a prompt's yes is recorded", () =>
    Effect.gen(function* () {
      const p = project()
      const store = NodePath.join(p.root, "trust.json")
      p.write({ extensions: [guard] })
      const print = yield* p.print
      NodeFs.writeFileSync(store, "{not json")
      const corrupt = yield* Trust.use((t) => t.check(print)).pipe(Effect.provide(Trust.layer(store)))
      assert.isFalse(corrupt.trusted)
      assert.include(corrupt.trusted ? "" : corrupt.changes[0], "not a valid trust store")
      NodeFs.rmSync(store)
      const asked: Array<ReadonlyArray<string>> = []
      const yes = Trust.layerPrompt(store, (_print, changes) => Effect.sync(() => (asked.push(changes), true)))
      assert.isTrue((yield* Trust.use((t) => t.check(print)).pipe(Effect.provide(yes))).trusted)
      assert.isTrue((yield* Trust.use((t) => t.check(print)).pipe(Effect.provide(Trust.layer(store)))).trusted)
      assert.strictEqual(asked.length, 1)
    })
  )
})
