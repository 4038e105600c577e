import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import {
  AuditLog,
  ExtensionHost,
  findProjectLayer,
  hostFromLayers,
  type LayerPlaces,
  loadLayers,
  Trust
} from "../src/index.ts"

/** The config layers merged: managed, user, project (trust decided by a fake here; the real store in test/). */

const temp = () => NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "abhed-layers-")))
const write = (file: string, value: unknown) => {
  NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
  NodeFs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value))
  return file
}

interface Setup {
  readonly places: LayerPlaces
  readonly managed: string
  readonly user: string
  readonly project: string
}
const setup = (): Setup => {
  const dir = temp()
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(NodePath.join(repo, ".git"), { recursive: true })
  NodeFs.mkdirSync(NodePath.join(repo, "src", "deep"), { recursive: true })
  return {
    places: {
      managed: NodePath.join(dir, "etc", "abhed.json"),
      user: NodePath.join(dir, "home", "abhed.json"),
      cwd: NodePath.join(repo, "src", "deep")
    },
    managed: NodePath.join(dir, "etc", "abhed.json"),
    user: NodePath.join(dir, "home", "abhed.json"),
    project: NodePath.join(repo, ".abhed", "abhed.json")
  }
}
const ext = (name: string, extra: object = {}) => ({ name, command: "true", ...extra })
const trusted = Layer.merge(
  Trust.layerFake(() => true),
  NodeServices.layer
)
const distrusted = Layer.merge(
  Trust.layerFake(() => false),
  NodeServices.layer
)

describe("config layers", () => {
  it.effect("merge: extensions the union, builtin_tools the union, max_rewrite_rounds the smallest set", () =>
    Effect.gen(function* () {
      const s = setup()
      write(
        s.managed,
        `// JSONC, as every config\n{"extensions": [{"name": "m", "command": "true"}], "builtin_tools": ["bash"]}`
      )
      write(s.user, { extensions: [ext("u", { cwd: "tools" })], max_rewrite_rounds: 9, builtin_tools: ["read"] })
      write(s.project, { extensions: [ext("p")], max_rewrite_rounds: 2 })
      const layers = yield* loadLayers(s.places)
      assert.deepStrictEqual(
        layers.config.extensions.map((x) => [x.name, x.cwd]),
        [
          ["m", NodePath.dirname(s.managed)],
          // Relative paths resolve against the layer's own file's folder.
          ["u", NodePath.join(NodePath.dirname(s.user), "tools")],
          ["p", NodePath.dirname(s.project)]
        ]
      )
      assert.deepStrictEqual(layers.config.builtin_tools, ["bash", "read"])
      assert.strictEqual(layers.config.max_rewrite_rounds, 2)
      assert.deepStrictEqual(
        layers.policies.map((p) => p.layer),
        ["managed", "user", "project"]
      )
      assert.isUndefined(layers.untrusted)
    }).pipe(Effect.provide(trusted))
  )

  it.effect("a layer that leaves max_rewrite_rounds out does not lower it; no layer at all is an empty config", () =>
    Effect.gen(function* () {
      const s = setup()
      assert.deepStrictEqual((yield* loadLayers(s.places)).config.extensions, [])
      write(s.user, { max_rewrite_rounds: 9 })
      write(s.managed, { extensions: [] })
      assert.strictEqual((yield* loadLayers(s.places)).config.max_rewrite_rounds, 9)
    }).pipe(Effect.provide(trusted))
  )

  it.effect("the same name in two layers is an error naming both files", () =>
    Effect.gen(function* () {
      const s = setup()
      write(s.user, { extensions: [ext("guard")] })
      write(s.project, { extensions: [ext("guard")] })
      const e = yield* Effect.flip(loadLayers(s.places))
      assert.strictEqual(e._tag, "LayerConflict")
      assert.include(e.message, s.user)
      assert.include(e.message, s.project)
    }).pipe(Effect.provide(trusted))
  )

  it.effect("an invalid layer is reported with its own file and path", () =>
    Effect.gen(function* () {
      const s = setup()
      write(s.user, `{"extensions": [{"name": "x"}]}`)
      const e = yield* Effect.flip(loadLayers(s.places))
      assert.match(e.message, /abhed\.json:1:\d+: extensions\[0\]/)
      assert.include(e.message, s.user)
    }).pipe(Effect.provide(trusted))
  )

  it.effect("an untrusted project layer: nothing of it is used, and the session has the other layers", () =>
    Effect.gen(function* () {
      const s = setup()
      write(s.user, { extensions: [ext("u")] })
      write(s.project, { extensions: [ext("p")], policy: { default: "deny" } })
      const layers = yield* loadLayers(s.places)
      assert.deepStrictEqual(
        layers.config.extensions.map((x) => x.name),
        ["u"]
      )
      assert.deepStrictEqual(
        layers.policies.map((p) => p.layer),
        ["user"]
      )
      assert.strictEqual(layers.untrusted?.print.file, s.project)
      assert.deepStrictEqual(
        layers.untrusted?.print.extensions.map((x) => x.name),
        ["p"]
      )
    }).pipe(Effect.provide(distrusted))
  )

  it.effect("allow_managed_only: only the managed extensions, each other layer's named in a warning", () =>
    Effect.gen(function* () {
      const s = setup()
      write(s.managed, { extensions: [ext("m")], allow_managed_only: true })
      write(s.user, { extensions: [ext("u1"), ext("u2")], policy: { deny: [{ tool: "bash" }] } })
      write(s.project, { extensions: [ext("m")] })
      const layers = yield* loadLayers(s.places)
      assert.deepStrictEqual(
        layers.config.extensions.map((x) => x.name),
        ["m"]
      )
      assert.strictEqual(layers.warnings.length, 2)
      assert.include(layers.warnings[0], "u1, u2")
      // Their policies still apply: a policy only ever makes a call stricter.
      assert.deepStrictEqual(
        layers.policies.map((p) => p.layer),
        ["managed", "user", "project"]
      )
    }).pipe(Effect.provide(trusted))
  )

  it.effect("the project layer: the nearest .abhed up to the repository root, not above it", () =>
    Effect.gen(function* () {
      const s = setup()
      assert.isUndefined(yield* findProjectLayer(s.places.cwd))
      write(s.project, {})
      assert.strictEqual((yield* findProjectLayer(s.places.cwd))?.root, NodePath.dirname(NodePath.dirname(s.project)))
      // Above the repository root is not this project's.
      const outside = NodePath.join(
        NodePath.dirname(NodePath.dirname(NodePath.dirname(s.project))),
        ".abhed",
        "abhed.json"
      )
      NodeFs.rmSync(s.project)
      write(outside, {})
      assert.isUndefined(yield* findProjectLayer(s.places.cwd))
    })
  )

  it.effect("the host joins the layers' policies: a stricter layer wins over an allowing one", () =>
    Effect.gen(function* () {
      const host = yield* ExtensionHost
      const out = yield* host.toolCall({ tool: "bash", args: { command: "ls" } })
      assert.strictEqual(out.decision, "deny")
      assert.deepStrictEqual(out.reasons, [{ extension: "policy", reason: "project:rule:deny[0]" }])
    }).pipe(
      Effect.provide(
        ExtensionHost.layerFake([], {
          sessionId: "s",
          policies: [
            {
              layer: "user",
              policy: { deny: [], ask: [], allow: [{ tool: "*", args: {}, reason: undefined }], default: "allow" }
            },
            {
              layer: "project",
              policy: { deny: [{ tool: "bash", args: {}, reason: undefined }], ask: [], allow: [], default: "allow" }
            }
          ]
        }).pipe(Layer.provide(AuditLog.layerNone))
      )
    )
  )

  it.effect(
    "hostFromLayers: an untrusted project's extension is not started; trusted, it is",
    () =>
      Effect.gen(function* () {
        const s = setup()
        const echo = NodePath.join(import.meta.dirname, "..", "..", "..", "test", "fixtures", "ext-echo.sh")
        write(s.project, {
          extensions: [ext("p", { command: "bash", args: [echo], startup_timeout_ms: 30_000, timeout_ms: 15_000 })]
        })
        const names = (trust: Layer.Layer<Trust>) =>
          Effect.gen(function* () {
            const host = yield* ExtensionHost
            return (yield* host.status).map((x) => x.name)
          }).pipe(
            Effect.provide(
              hostFromLayers(s.places, { sessionId: "s" }).pipe(
                Layer.provide(Layer.mergeAll(trust, NodeServices.layer, AuditLog.layerNone))
              )
            )
          )
        assert.deepStrictEqual(yield* names(Trust.layerFake(() => false)), [])
        assert.deepStrictEqual(yield* names(Trust.layerFake(() => true)), ["p"])
      }),
    120_000
  )
})
