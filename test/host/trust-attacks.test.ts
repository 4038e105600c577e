import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import {
  describeChanges,
  fingerprintProject,
  type LayerPlaces,
  loadConfig,
  loadLayers,
  recordTrust,
  storeModeProblem,
  Trust
} from "@abhed/host"

/**
 * An attacker's pass on trust: the repository (its `.abhed/abhed.json`, the files it names) is hostile. The
 * guarantee: nothing of the project layer runs until the user trusted exactly what it would start, and what a
 * trusted config starts cannot change without trust being asked again. Each case trusts the project as it is (the
 * real store), changes one thing an attacker controls, and asks the loader whether the project still runs.
 */

interface Repo {
  readonly dir: string
  readonly repo: string
  readonly store: string
  readonly places: LayerPlaces
  readonly put: (rel: string, text: string) => string
  readonly config: (value: unknown) => void
}

const repoWorld = (): Repo => {
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-trust-attack-")))
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(NodePath.join(repo, ".git"), { recursive: true })
  const put = (rel: string, text: string) => {
    const file = NodePath.resolve(repo, rel)
    NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
    NodeFs.writeFileSync(file, text)
    return file
  }
  return {
    dir,
    repo,
    store: NodePath.join(dir, "config", "abhed", "trust.json"),
    places: {
      managed: NodePath.join(dir, "etc", "abhed.json"),
      user: NodePath.join(dir, "config", "abhed", "abhed.json"),
      cwd: repo
    },
    put,
    config: (value) => void put(".abhed/abhed.json", JSON.stringify(value))
  }
}

const layersOf = (w: Repo) =>
  loadLayers(w.places).pipe(Effect.provide(Layer.merge(Trust.layer(w.store), NodeServices.layer)))

/** Trust the project as it is now, as `abhed-ext trust --yes` does. */
const trustNow = (w: Repo) =>
  Effect.gen(function* () {
    const layers = yield* layersOf(w)
    const print = layers.untrusted?.print
    assert.isDefined(print, "the project is untrusted before it is trusted")
    if (print !== undefined) yield* recordTrust(w.store, print, new Date())
    assert.isUndefined((yield* layersOf(w)).untrusted, "trusted as it is")
  })

/** After the attacker's change, the project must be untrusted again, with `change` among what it says. */
const untrustedAgain = (w: Repo, change: RegExp) =>
  Effect.gen(function* () {
    const layers = yield* layersOf(w)
    assert.isDefined(layers.untrusted, "the project still runs after the change")
    assert.deepStrictEqual(
      layers.config.extensions.map((x) => x.name),
      [],
      "no extension of the changed project is started"
    )
    assert.match(layers.untrusted?.changes.join("\n") ?? "", change)
  })

describe("trust under attack: a script swapped behind a link", () => {
  it.effect("a script that is a link out of the project: its target's bytes count", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      const outside = NodePath.join(w.dir, "elsewhere", "real.sh")
      NodeFs.mkdirSync(NodePath.dirname(outside), { recursive: true })
      NodeFs.writeFileSync(outside, "echo good\n")
      NodeFs.symlinkSync(outside, NodePath.join(w.repo, "guard.sh"))
      w.config({ extensions: [{ name: "guard", command: "bash", args: ["../guard.sh"] }] })
      yield* trustNow(w)
      NodeFs.writeFileSync(outside, "echo evil\n")
      yield* untrustedAgain(w, /script guard\.sh changed/u)
    })
  )

  it.effect("a script link pointed elsewhere after trust", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put("good.sh", "echo good\n")
      w.put("evil.sh", "echo evil\n")
      NodeFs.symlinkSync("good.sh", NodePath.join(w.repo, "guard.sh"))
      w.config({ extensions: [{ name: "guard", command: "bash", args: ["../guard.sh"] }] })
      yield* trustNow(w)
      NodeFs.unlinkSync(NodePath.join(w.repo, "guard.sh"))
      NodeFs.symlinkSync("evil.sh", NodePath.join(w.repo, "guard.sh"))
      yield* untrustedAgain(w, /script guard\.sh changed/u)
    })
  )

  it.effect("the .abhed folder a link to a folder outside: the script in it still counts", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      const outside = NodePath.join(w.dir, "shared-abhed")
      NodeFs.mkdirSync(outside, { recursive: true })
      NodeFs.writeFileSync(NodePath.join(outside, "guard.sh"), "echo good\n")
      NodeFs.writeFileSync(
        NodePath.join(outside, "abhed.json"),
        JSON.stringify({ extensions: [{ name: "guard", command: "bash", args: ["guard.sh"] }] })
      )
      NodeFs.symlinkSync(outside, NodePath.join(w.repo, ".abhed"))
      yield* trustNow(w)
      NodeFs.writeFileSync(NodePath.join(outside, "guard.sh"), "echo evil\n")
      yield* untrustedAgain(w, /guard\.sh changed/u)
    })
  )

  it.effect("the config a link to a file outside the project: the scripts beside its target count", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      const outside = NodePath.join(w.dir, "shared")
      NodeFs.mkdirSync(outside, { recursive: true })
      NodeFs.writeFileSync(NodePath.join(outside, "guard.sh"), "echo good\n")
      NodeFs.writeFileSync(
        NodePath.join(outside, "abhed.json"),
        JSON.stringify({ extensions: [{ name: "guard", command: "bash", args: ["guard.sh"] }] })
      )
      NodeFs.mkdirSync(NodePath.join(w.repo, ".abhed"))
      NodeFs.symlinkSync(NodePath.join(outside, "abhed.json"), NodePath.join(w.repo, ".abhed", "abhed.json"))
      yield* trustNow(w)
      NodeFs.writeFileSync(NodePath.join(outside, "guard.sh"), "echo evil\n")
      yield* untrustedAgain(w, /guard\.sh changed/u)
    })
  )

  it.effect("a cwd that is a link: the script found through it counts, and pointing it elsewhere is a change", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put("a/guard.sh", "echo good\n")
      w.put("b/guard.sh", "echo evil\n")
      NodeFs.symlinkSync("a", NodePath.join(w.repo, "tools"))
      w.config({ extensions: [{ name: "guard", command: "bash", args: ["guard.sh"], cwd: "../tools" }] })
      yield* trustNow(w)
      NodeFs.unlinkSync(NodePath.join(w.repo, "tools"))
      NodeFs.symlinkSync("b", NodePath.join(w.repo, "tools"))
      yield* untrustedAgain(w, /script tools\/guard\.sh changed/u)
    })
  )
})

describe("trust under attack: a file the config names outside the project", () => {
  it.effect("a project in a subfolder of its repository names a script elsewhere in the repository", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put("tools/guard.sh", "echo good\n")
      w.put(
        "app/.abhed/abhed.json",
        JSON.stringify({ extensions: [{ name: "guard", command: "bash", args: ["../../tools/guard.sh"] }] })
      )
      const sub = { ...w, places: { ...w.places, cwd: NodePath.join(w.repo, "app") } }
      yield* trustNow(sub)
      w.put("tools/guard.sh", "echo evil\n")
      yield* untrustedAgain(sub, /guard\.sh changed/u)
    })
  )

  it.effect("a command written as a relative path out of the project counts", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put("tools/guard", "#!/bin/sh\necho good\n")
      w.put("app/.abhed/abhed.json", JSON.stringify({ extensions: [{ name: "guard", command: "../../tools/guard" }] }))
      const sub = { ...w, places: { ...w.places, cwd: NodePath.join(w.repo, "app") } }
      yield* trustNow(sub)
      w.put("tools/guard", "#!/bin/sh\necho evil\n")
      yield* untrustedAgain(sub, /tools\/guard changed/u)
    })
  )

  it.effect("a relative PATH entry out of the project: the program found there counts", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put("tools/bin/guard", "#!/bin/sh\necho good\n")
      w.put(
        "app/.abhed/abhed.json",
        JSON.stringify({ extensions: [{ name: "guard", command: "guard", env: { PATH: "../../tools/bin:/usr/bin" } }] })
      )
      const sub = { ...w, places: { ...w.places, cwd: NodePath.join(w.repo, "app") } }
      yield* trustNow(sub)
      w.put("tools/bin/guard", "#!/bin/sh\necho evil\n")
      yield* untrustedAgain(sub, /tools\/bin\/guard changed/u)
    })
  )

  it.effect("an absolute PATH entry into a folder of the project named `..bin` is inside the project", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put("..bin/guard", "#!/bin/sh\necho good\n")
      const path = `${NodePath.join(w.repo, "..bin")}:/usr/bin`
      w.config({ extensions: [{ name: "guard", command: "guard", env: { PATH: path } }] })
      yield* trustNow(w)
      w.put("..bin/guard", "#!/bin/sh\necho evil\n")
      yield* untrustedAgain(w, /script \.\.bin\/guard changed/u)
    })
  )

  it.effect("a PATH the config sets into the project: a program its script runs from there counts, a new one too", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put(".abhed/guard.sh", "jq . ; cat x\n")
      w.put("bin/jq", "#!/bin/sh\necho good\n")
      w.config({
        extensions: [{ name: "guard", command: "bash", args: ["guard.sh"], env: { PATH: "../bin:/usr/bin" } }]
      })
      yield* trustNow(w)
      w.put("bin/jq", "#!/bin/sh\necho evil\n")
      yield* untrustedAgain(w, /script bin\/jq changed/u)
      NodeFs.rmSync(w.store)
      yield* trustNow(w)
      // Planted after trust, ahead of /usr/bin/cat on the PATH.
      w.put("bin/cat", "#!/bin/sh\necho evil\n")
      yield* untrustedAgain(w, /script bin\/cat is newly named/u)
    })
  )

  it.effect("a cwd outside the project: the script there counts", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      const outside = NodePath.join(w.dir, "tools")
      NodeFs.mkdirSync(outside, { recursive: true })
      NodeFs.writeFileSync(NodePath.join(outside, "guard.sh"), "echo good\n")
      w.config({ extensions: [{ name: "guard", command: "bash", args: ["guard.sh"], cwd: outside }] })
      yield* trustNow(w)
      NodeFs.writeFileSync(NodePath.join(outside, "guard.sh"), "echo evil\n")
      yield* untrustedAgain(w, /guard\.sh changed/u)
    })
  )
})

/**
 * Over 2 GiB Node cannot read a file whole (its digest was a constant "unreadable": an edit went unseen). Hashing
 * 2 GiB twice costs ~12 s of CPU, so at that size only in `pnpm test:stress`'s full round (`ABHED_FULL=1`); the
 * usual run reads a file of several chunks, edited in its last one.
 */
const BigScriptBytes = process.env["ABHED_FULL"] === "1" ? 2 ** 31 + 1 : 3 * 2 ** 20 + 1

describe("trust under attack: a script too big to read whole", () => {
  it.effect(
    "a script over 2 GiB (Node's limit for reading a file whole; several 1 MiB reads in the usual run) edited after trust: its bytes count",
    () =>
      Effect.gen(function* () {
        const w = repoWorld()
        // Sparse: no disk; zeros, then the payload an attacker would edit.
        const big = w.put(".abhed/guard.bin", "")
        NodeFs.truncateSync(big, BigScriptBytes)
        w.config({ extensions: [{ name: "guard", command: "bash", args: ["guard.bin"] }] })
        // Two fingerprints, not a whole trust round: each reads the 2 GiB.
        const print = Effect.flatMap(loadConfig(NodePath.join(w.repo, ".abhed", "abhed.json")), (loaded) =>
          fingerprintProject(w.repo, loaded)
        ).pipe(Effect.provide(NodeServices.layer))
        const trusted = yield* print
        const fd = NodeFs.openSync(big, "r+")
        // At the end: past the first read, where hashing only part of the file would miss it.
        NodeFs.writeSync(fd, "echo evil\n", BigScriptBytes - 10)
        NodeFs.closeSync(fd)
        assert.deepStrictEqual(
          describeChanges(trusted, yield* print).map((l) => l.replace(/ \(sha256.*/u, "")),
          ["extension guard: script .abhed/guard.bin changed"]
        )
      }),
    120_000
  )
})

describe("trust under attack: what the environment makes a program load", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, string>, string, ReadonlyArray<string>]> = [
    ["NODE_OPTIONS=--require ./hook.cjs", { NODE_OPTIONS: "--require ./hook.cjs" }, "node", ["guard.js"]],
    ["NODE_OPTIONS=--import=./hook.mjs", { NODE_OPTIONS: "--import=./hook.mjs" }, "node", ["guard.js"]],
    ["LD_PRELOAD=./hook.so", { LD_PRELOAD: "./hook.so" }, "node", ["guard.js"]],
    ["BASH_ENV=./hook.sh", { BASH_ENV: "./hook.sh" }, "bash", ["guard.sh"]],
    ["PYTHONSTARTUP=./hook.py", { PYTHONSTARTUP: "./hook.py" }, "python3", ["guard.py"]]
  ]
  for (const [title, env, command, args] of cases) {
    it.effect(`${title}: the file it names counts`, () =>
      Effect.gen(function* () {
        const w = repoWorld()
        const hook = (Object.values(env)[0] ?? "").split(/[ =]/u).at(-1) ?? ""
        w.put(NodePath.join(".abhed", hook), "// good\n")
        w.put(NodePath.join(".abhed", args[0] ?? ""), "// guard\n")
        w.config({ extensions: [{ name: "guard", command, args, env }] })
        yield* trustNow(w)
        w.put(NodePath.join(".abhed", hook), "// evil\n")
        yield* untrustedAgain(w, /script \.abhed\/hook\.\w+ changed/u)
      })
    )
  }

  it.effect("`env` as the command: the assignment's file counts", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put(".abhed/hook.cjs", "// good\n")
      w.put(".abhed/guard.js", "// guard\n")
      w.config({
        extensions: [{ name: "guard", command: "env", args: ["NODE_OPTIONS=--require ./hook.cjs", "node", "guard.js"] }]
      })
      yield* trustNow(w)
      w.put(".abhed/hook.cjs", "// evil\n")
      yield* untrustedAgain(w, /script \.abhed\/hook\.cjs changed/u)
    })
  )
})

describe("trust under attack: held", () => {
  it.effect("a PATH entry inside the project: the program found there counts", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put("bin/guard", "#!/bin/sh\necho good\n")
      w.config({ extensions: [{ name: "guard", command: "guard", env: { PATH: "../bin:/usr/bin:/bin" } }] })
      yield* trustNow(w)
      w.put("bin/guard", "#!/bin/sh\necho evil\n")
      yield* untrustedAgain(w, /script bin\/guard changed/u)
    })
  )

  it.effect("a program planted after trust on an earlier PATH entry inside the project", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.config({ extensions: [{ name: "guard", command: "true", env: { PATH: "../bin:/usr/bin:/bin" } }] })
      yield* trustNow(w)
      w.put("bin/true", "#!/bin/sh\necho evil\n")
      yield* untrustedAgain(w, /script bin\/true was created/u)
    })
  )

  it.effect("a node option naming a preload as its own argument counts", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put(".abhed/hook.cjs", "// good\n")
      w.config({ extensions: [{ name: "guard", command: "node", args: ["--require", "./hook.cjs", "-e", "1"] }] })
      yield* trustNow(w)
      w.put(".abhed/hook.cjs", "// evil\n")
      yield* untrustedAgain(w, /script \.abhed\/hook\.cjs changed/u)
    })
  )

  it.effect("an env value or an env_passthrough entry added after trust", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      const x = { name: "guard", command: "true" }
      w.config({ extensions: [x] })
      yield* trustNow(w)
      w.config({ extensions: [{ ...x, env_passthrough: ["*"] }] })
      yield* untrustedAgain(w, /its settings changed/u)
      w.config({ extensions: [{ ...x, env: { PATH: "." } }] })
      yield* untrustedAgain(w, /env keys changed: \+PATH/u)
    })
  )

  it.effect("a repeated key is a problem, not a second config trust could disagree on", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put(
        ".abhed/abhed.json",
        `{"extensions": [{"name": "guard", "command": "true"}], "extensions": [{"name": "guard", "command": "sh"}]}`
      )
      const failed = yield* Effect.flip(layersOf(w))
      assert.match(failed.message, /extensions/u)
    })
  )

  it.effect("a __proto__ key is an unknown key, not a setting the loader inherits and the fingerprint misses", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.put(
        ".abhed/abhed.json",
        `{"extensions": [{"name": "guard", "command": "true", "__proto__": {"cwd": "/tmp"}}], "__proto__": {"policy": {}}}`
      )
      const failed = yield* Effect.flip(layersOf(w))
      assert.match(failed.message, /extensions\[0\]\.__proto__: unknown key/u)
    })
  )

  it.effect("a look-alike folder (Cyrillic а) is another project: trusting one does not trust the other", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.config({ extensions: [{ name: "guard", command: "true" }] })
      yield* trustNow(w)
      const twin = NodePath.join(w.dir, "r\u0435po")
      NodeFs.cpSync(w.repo, twin, { recursive: true })
      const layers = yield* loadLayers({ ...w.places, cwd: twin }).pipe(
        Effect.provide(Layer.merge(Trust.layer(w.store), NodeServices.layer))
      )
      assert.isDefined(layers.untrusted)
    })
  )

  it.effect("a corrupted store trusts nothing, and says why", () =>
    Effect.gen(function* () {
      const w = repoWorld()
      w.config({ extensions: [{ name: "guard", command: "true" }] })
      yield* trustNow(w)
      NodeFs.writeFileSync(w.store, `{"version": 1, "projects": {"${w.repo}": {"fingerprint": 1}}}`)
      yield* untrustedAgain(w, /not a valid trust store/u)
    })
  )
})

describe("trust under attack: the store", () => {
  it("a store file of another user, or writable by others, or in a folder anyone writes, is not believed", () => {
    const mine = { uid: 1000, mode: 0o100600 }
    const folder = { mode: 0o40700 }
    assert.isUndefined(storeModeProblem(mine, folder, 1000))
    assert.match(storeModeProblem({ ...mine, uid: 0 }, folder, 1000) ?? "", /owned by another user \(uid 0\)/u)
    assert.match(storeModeProblem({ ...mine, mode: 0o100620 }, folder, 1000) ?? "", /writable by others \(mode 0620\)/u)
    assert.match(storeModeProblem({ ...mine, mode: 0o100602 }, folder, 1000) ?? "", /writable by others/u)
    assert.match(storeModeProblem(mine, { mode: 0o41777 }, 1000) ?? "", /folder writable by others \(mode 0777\)/u)
    // A group-writable folder is the usual one under a umask of 002 (a group of one's own): not refused.
    assert.isUndefined(storeModeProblem(mine, { mode: 0o40770 }, 1000))
  })
})
