import type { AuditLog } from "@abhed/host/AuditLog"
import {
  describeUntrusted,
  layerPlaces,
  layerRoots,
  type Layers,
  loadLayers,
  type UntrustedProject
} from "@abhed/host/ConfigLayers"
import { ExtensionHost } from "@abhed/host/ExtensionHost"
import { printable, printableLines } from "@abhed/host/Printable"
import { defaultTrustStore, Trust } from "@abhed/host/Trust"
import type { Config } from "@abhed/protocol"
import { Console, Effect, type FileSystem, type Layer, Option, type Path, type Stdio } from "effect"
import * as NodeOs from "node:os"
import { ConfigRejected } from "./CliError.ts"
import { loadConfig } from "./ConfigFile.ts"
import { processHost } from "./HostLayer.ts"

/**
 * `abhed-ext run` without `--config`: the config layers of where it stands (docs/configuration.md), the project
 * layer only if trusted. Nothing is asked here: trusting is an explicit act (`abhed-ext trust`), so an untrusted
 * project's extensions are left out, with a word on stderr saying what changed and what to run.
 */

/** The trust store of this user (`$XDG_CONFIG_HOME/abhed/trust.json`). */
export const trustStoreFile = (): string => defaultTrustStore(process.env, NodeOs.homedir())

/**
 * Why a project's extensions are not started, and the command that would trust it. What changed quotes the
 * repository's own config (a cwd, env keys): shown escaped, so it cannot drive the terminal.
 */
export const untrustedMessage = (command: string, u: UntrustedProject): string =>
  describeUntrusted(u)
    .map((line, i) => printable(i === 0 ? `${command}: ${line}` : line))
    .join("\n")

/** Load the layers from the current directory; an invalid layer is exit 2 (its problems on stderr). */
export const loadCliLayers = (command: string): Effect.Effect<Layers, ConfigRejected, Path.Path> =>
  loadLayers(layerPlaces(process.env, NodeOs.homedir(), process.cwd())).pipe(
    Effect.provide(Trust.layer(trustStoreFile())),
    Effect.mapError(
      (e) => new ConfigRejected({ file: e._tag === "LayerConflict" ? e.files.join(", ") : e.file, detail: e.message })
    ),
    // A project layer is a repository's: its problems quote its text, escaped.
    Effect.tapError((e) => Console.error(printableLines(e.message).join("\n"))),
    Effect.tap((layers) =>
      Effect.gen(function* () {
        // A warning names a trusted project's file, in a folder a cloned repository named: escaped too.
        for (const w of layers.warnings) yield* Console.error(printable(`${command}: warning: ${w}`))
        if (layers.untrusted !== undefined) yield* Console.error(untrustedMessage(command, layers.untrusted))
      })
    )
  )

/** What the layers are, for messages: their files, as one subject (`… configures no extensions`). */
export const layersLabel = (layers: Layers): string =>
  layers.used.length === 1 && layers.used[0] !== undefined
    ? layers.used[0].loaded.file
    : `the layered config (${layers.used.length > 0 ? layers.used.map((l) => l.loaded.file).join(", ") : layers.untrusted === undefined ? "none found" : "none used: the project's is not trusted"})`

/** The process-backed host over the merged layers, each layer's policy joined. */
export const layersHost = (layers: Layers) => (sessionId: string) =>
  ExtensionHost.layer(layers.config, {
    sessionId,
    baseDir: process.cwd(),
    policies: layers.policies,
    scriptRoots: layerRoots(layers)
  })

/** What `run` runs: the file `--config` names, exactly (the operator named it), or else the layers. */
export interface RunSource {
  /** For messages: the file as given, or the layers' files. */
  readonly label: string
  readonly config: Config
  readonly host: (sessionId: string) => Layer.Layer<ExtensionHost, never, AuditLog>
  /** The project layer left out for want of trust (`run --strict` fails on it). */
  readonly untrusted: UntrustedProject | undefined
}

export const runSource = (
  config: Option.Option<string>
): Effect.Effect<RunSource, ConfigRejected, FileSystem.FileSystem | Path.Path | Stdio.Stdio> =>
  Option.isSome(config)
    ? Effect.map(loadConfig(config.value), (loaded) => ({
        label: config.value,
        config: loaded.config,
        host: processHost(loaded),
        untrusted: undefined
      }))
    : Effect.map(loadCliLayers("abhed-ext run"), (layers) => ({
        label: layersLabel(layers),
        config: layers.config,
        host: layersHost(layers),
        untrusted: layers.untrusted
      }))
