import { decodeReply } from "@abhed/protocol/Reply"
import { describe, expect, it } from "vitest"
import { encodeReply } from "../src/Checks.ts"

/**
 * What the SDK sends is a reply the host accepts, or `{}`: a value that passed the check but encodes to something
 * else (a nested `toJSON`, a getter that answers differently the second time) would get the extension marked dead.
 */
describe("encodeReply checks the text it sends", () => {
  const deep = (): unknown => {
    let v: unknown = 1
    for (let i = 0; i < 1000; i++) v = [v]
    return v
  }
  const cases: ReadonlyArray<readonly [string, "tool_call" | "list_tools", () => unknown]> = [
    [
      "args whose toJSON is a string",
      "tool_call",
      () => ({ block: true, args: { command: "ls", toJSON: () => "rm -rf /" } })
    ],
    [
      "a declared input_schema whose toJSON is a number",
      "list_tools",
      () => ({
        tools: [{ name: "t", description: "d", input_schema: { toJSON: () => 5 } }]
      })
    ],
    [
      "args with a getter that nests too deep on its second read",
      "tool_call",
      () => {
        let reads = 0
        return {
          args: {
            get a() {
              return reads++ === 0 ? 1 : deep()
            }
          }
        }
      }
    ]
  ]
  for (const [name, event, reply] of cases) {
    it(`${name}: not sent, the handler's mistake reported`, () => {
      const encoded = encodeReply(event, reply())
      if (encoded._tag === "Success") {
        // Whatever goes out must be what the host accepts.
        expect(decodeReply(event, JSON.parse(encoded.success))._tag).toBe("Success")
      }
      expect(encoded._tag).toBe("Failure")
      if (encoded._tag === "Failure") expect(encoded.failure).toContain(`sent "failed" instead`)
    })
  }

  it("a reply with an ordinary toJSON inside (a Date in args) is sent as encoded", () => {
    const when = new Date(0)
    const encoded = encodeReply("tool_call", { args: { when } })
    expect(encoded).toEqual(
      expect.objectContaining({ _tag: "Success", success: `{"args":{"when":"1970-01-01T00:00:00.000Z"}}` })
    )
  })
})
