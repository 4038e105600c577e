import * as os from "node:os"
import type { Machine } from "./Report.ts"

/** The machine this run is on, as recorded next to the figures. */
export const currentMachine = (mode: Machine["mode"]): Machine => {
  const cpus = os.cpus()
  return {
    os: `${os.type()} ${os.release()}`,
    arch: os.arch(),
    cpus: os.availableParallelism(),
    cpu_model: cpus[0]?.model.trim() ?? "unknown",
    memory_mib: Math.round(os.totalmem() / 1024 / 1024),
    node: process.version,
    load_avg_1m: os.loadavg()[0] ?? 0,
    mode
  }
}
