import { execFileSync, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import * as os from "node:os"
import { describe, expect, it } from "vitest"
import { cpuList, pinnedCommand, placements, withAgentOn } from "../src/Placement.ts"
import { dispatchBudget } from "../src/scenarios/Dispatch.ts"

/** Where the bench pins its processes (Placement.ts): the parsing, the wrapping, and (with taskset) the effect. */

const allowedCpusIn = (status: string): string => /Cpus_allowed_list:\s*(\S+)/.exec(status)?.[1] ?? "?"
/** The CPUs the main thread of `pid` may run on (its thread id is its pid). */
const allowedCpus = (pid: number): string => allowedCpusIn(readFileSync(`/proc/${pid}/status`, "utf8"))

describe("cpuList", () => {
  it("reads taskset's lists: single CPUs, ranges, both", () => {
    expect(cpuList("0")).toEqual([0])
    expect(cpuList("0,1")).toEqual([0, 1])
    expect(cpuList("0-3")).toEqual([0, 1, 2, 3])
    expect(cpuList("0-1,4,6-7")).toEqual([0, 1, 4, 6, 7])
    expect(cpuList("")).toEqual([])
  })
})

describe("placements", () => {
  it("are another core and the agent's core when taskset and two CPUs are there, else none", () => {
    const taskset = spawnSync("taskset", ["--version"]).error === undefined
    if (!taskset || os.availableParallelism() < 2) {
      expect(placements).toEqual([])
      return
    }
    const [other, same] = placements
    expect(other?.extensionCpu).not.toBe(other?.agentCpu)
    expect(same?.extensionCpu).toBe(same?.agentCpu)
  })

  it("a pinned command runs the extension itself on the placement's CPU; the agent's thread is put back after", async () => {
    for (const placement of placements) {
      const command = pinnedCommand(
        {
          command: process.execPath,
          args: ["-e", "process.stdout.write(require('fs').readFileSync('/proc/self/status','utf8'))"]
        },
        placement
      )
      expect(command.command).toBe("taskset")
      const status = execFileSync(command.command, [...command.args], { encoding: "utf8" })
      expect(allowedCpusIn(status)).toBe(String(placement.extensionCpu))
      const before = allowedCpus(process.pid)
      const during = await withAgentOn(placement, async () => allowedCpus(process.pid))
      expect(during).toBe(String(placement.agentCpu))
      expect(allowedCpus(process.pid)).toBe(before)
    }
    // Both placements or none (then the loop above had nothing to check, and Dispatch.ts runs unpinned).
    expect(placements.length === 0 || placements.length === 2).toBe(true)
  })
})

describe("dispatchBudget", () => {
  it("is docs/design.md#performance-budget's 1.3 on another core and unpinned, 2 on the agent's own core", () => {
    expect(dispatchBudget(undefined)).toBe(1.3)
    expect(dispatchBudget({ label: "on another core", agentCpu: 0, extensionCpu: 1 })).toBe(1.3)
    expect(dispatchBudget({ label: "on the agent's core", agentCpu: 1, extensionCpu: 1 })).toBe(2)
    // Whatever the machine gives: every pinned placement gets one of the two.
    expect(placements.map(dispatchBudget)).toEqual(placements.length === 0 ? [] : [1.3, 2])
  })
})
