import { Effect, type FileSystem, type Path } from "effect"
import { type ConfigInvalid, type ConfigUnreadable, loadConfig } from "./ConfigLoader.ts"
import { type LayerConflict, type LayerPlaces, layerRoots, type Layers, loadLayers } from "./ConfigLayers.ts"
import type { ExtensionHostShape } from "./ExtensionHost.ts"
import type { ReloadRejected, ReloadReport } from "./Reload.ts"
import type { Trust } from "./Trust.ts"

/**
 * A reload from where a host's config came from (docs/embedding.md#reload): the file again, or the layers again
 * (the project layer's trust checked again: a project changed since it was trusted is left out, so its extensions
 * stop). A file or layer that does not load fails as at startup, and the set running stays as it was.
 */

/** Reload `host` from the config file `file` (relative `cwd`s against its folder, as at startup). */
export const reloadFromFile = (
  host: ExtensionHostShape,
  file: string
): Effect.Effect<ReloadReport, ConfigUnreadable | ConfigInvalid | ReloadRejected, FileSystem.FileSystem | Path.Path> =>
  Effect.flatMap(loadConfig(file), (loaded) => host.reload({ config: loaded.config, baseDir: loaded.baseDir }))

/** Reload `host` (made by `hostFromLayers(places, ...)`) from the layers at `places`; the layers it loaded too. */
export const reloadFromLayers = (
  host: ExtensionHostShape,
  places: LayerPlaces
): Effect.Effect<
  { readonly report: ReloadReport; readonly layers: Layers },
  ConfigUnreadable | ConfigInvalid | LayerConflict | ReloadRejected,
  Trust | Path.Path
> =>
  Effect.flatMap(loadLayers(places), (layers) =>
    Effect.map(
      host.reload({ config: layers.config, policies: layers.policies, baseDir: places.cwd, roots: layerRoots(layers) }),
      (report) => ({ report, layers })
    )
  )
