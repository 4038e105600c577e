import { describe, expect, it } from "vitest"
import { runCli } from "../support/cli-helpers.ts"

/**
 * Issue 24.4: `run` and `hook` print JSON lines on stdout and nothing else, ever. `--completions` printed a shell
 * script there and `--wizard` its prompts: on those two commands they are a usage error (exit 64, stdout empty);
 * elsewhere they work as before.
 */

describe("the global flags that print on stdout are kept off run and hook (issue 24.4)", () => {
  it.each([
    [["run", "--completions", "bash"], "run", "--completions"],
    [["run", "-c", "abhed.json", "--completions=zsh"], "run", "--completions"],
    [["--log-level", "debug", "run", "--wizard"], "run", "--wizard"],
    [["hook", "--wizard", "--format", "claude", "--", "true"], "hook", "--wizard"]
  ] as const)("%j: exit 64, nothing on stdout", async (args, command, flag) => {
    const r = await runCli(args)
    expect(r.code, r.stderr).toBe(64)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe(
      `abhed-ext ${command}: ${flag} is not available on ${command}, whose stdout carries JSON lines and nothing ` +
        `else; use \`abhed-ext ${flag}\`\n(\`abhed-ext ${command} --help\` for more)\n`
    )
  })

  it.each([[["--completions", "bash"]], [["check", "--completions", "bash"]]] as const)(
    "%j still prints the completion script on stdout",
    async (args) => {
      const r = await runCli(args)
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain("abhed-ext-completions")
    }
  )
})
