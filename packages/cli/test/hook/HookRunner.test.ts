import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { runHook } from "../../src/hook/HookRunner.ts"

/** Real runs of `runHook` on the bounds Node's timers and our stdout cap put on it. */

const bash = (script: string) => ({ command: "bash", args: ["-c", script], env: process.env })

describe("runHook", () => {
  it("a --timeout-ms past what setTimeout can wait (2^31-1 ms) still waits for the hook", async () => {
    // Unclamped, Node fires such a timer after 1 ms: the hook would be killed and its block lost.
    const run = await Effect.runPromise(
      runHook(bash("cat >/dev/null; sleep 0.2; echo no >&2; exit 2"), "{}\n", 3_000_000_000)
    )
    expect(run).toEqual({ _tag: "Exited", code: 2, stdout: "", stderr: "no\n" })
  })

  it("says when stdout passed the cap and was cut", async () => {
    const big = await Effect.runPromise(
      runHook(bash("cat >/dev/null; head -c 17000000 /dev/zero | tr '\\0' x"), "{}\n", 20_000)
    )
    expect(big).toMatchObject({ _tag: "Exited", code: 0, stdoutCut: true })
    if (big._tag === "Exited") expect(big.stdout.length).toBe(16 * 1024 * 1024)
    const small = await Effect.runPromise(runHook(bash("cat >/dev/null; echo '{}'"), "{}\n", 20_000))
    expect(small).toEqual({ _tag: "Exited", code: 0, stdout: "{}\n", stderr: "" })
  }, 30_000)
})
