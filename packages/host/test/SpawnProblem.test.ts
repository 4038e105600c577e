import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { describeSpawnError, spawnHint } from "../src/SpawnProblem.ts"

/** A failed start says what to do, not only Node's errno (`spawn ./guard.sh EACCES`). */

const errno = (code: string, message: string) => Object.assign(new Error(message), { code })

describe("SpawnProblem: the hint after a failed start", () => {
  it("a script without its executable bit: chmod +x, or its interpreter, by its name", () => {
    expect(describeSpawnError("./guard.sh", errno("EACCES", "spawn ./guard.sh EACCES"))).toBe(
      "spawn ./guard.sh EACCES (permission denied: not an executable file: `chmod +x` a script that starts with #!, " +
        "or start it through its interpreter: bash ./guard.sh)"
    )
    expect(spawnHint("guard.py", errno("EACCES", ""))).toContain("python3 guard.py")
    expect(spawnHint("guard.ts", errno("EACCES", ""))).toContain("node guard.ts")
  })

  it("a program that is not there: installed? a path: against which folder?", () => {
    expect(describeSpawnError("python4", errno("ENOENT", "spawn python4 ENOENT"))).toBe(
      "spawn python4 ENOENT (no such program on PATH: is it installed?)"
    )
    expect(describeSpawnError("./guard.sh", errno("ENOENT", "spawn ./guard.sh ENOENT"))).toBe(
      "spawn ./guard.sh ENOENT (no such file: a relative path resolves against the working directory, the " +
        "extension's cwd)"
    )
  })

  it("a command line given as the command: the program in command, its arguments in args", () => {
    expect(describeSpawnError("python3 guard.py", errno("ENOENT", "spawn python3 guard.py ENOENT"))).toBe(
      'spawn python3 guard.py ENOENT (no program is named so: "command" is one program, not a command line; its ' +
        'arguments go in "args": "command": "python3", "args": ["guard.py"])'
    )
    expect(spawnHint("./guard.sh --all", errno("ENOENT", ""))).toContain('"command": "./guard.sh", "args": ["--all"]')
  })

  it("a script in the working directory named without ./: not on PATH, name it ./ or start its interpreter", () => {
    const dir = mkdtempSync(join(tmpdir(), "abhed-spawn-"))
    try {
      writeFileSync(join(dir, "guard.sh"), "")
      expect(spawnHint("guard.sh", errno("ENOENT", ""), dir)).toBe(
        " (not on PATH; guard.sh is a file in the working directory: name it ./guard.sh, or start it through its " +
          "interpreter: bash guard.sh)"
      )
      expect(spawnHint("other.sh", errno("ENOENT", ""), dir)).toBe(" (no such program on PATH: is it installed?)")
      // A folder given as the command (`"command": "./"`, `"./hooks"`): it is no program, whatever its mode.
      expect(spawnHint("./", errno("EACCES", ""), dir)).toBe(" (a folder, not a program)")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("finds Node's code inside a wrapper's cause (effect's PlatformError), and adds nothing for other errors", () => {
    const wrapped = Object.assign(new Error("NotFound: ChildProcess.spawn (python4)"), {
      cause: errno("ENOENT", "spawn python4 ENOENT")
    })
    expect(spawnHint("python4", wrapped)).toContain("no such program on PATH")
    expect(describeSpawnError("x", errno("EMFILE", "spawn x EMFILE"))).toBe("spawn x EMFILE")
    expect(describeSpawnError("x", "text")).toBe("text")
  })
})
