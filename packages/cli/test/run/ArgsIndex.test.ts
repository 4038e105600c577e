import { describe, expect, it } from "vitest"
import * as ArgsIndex from "../../src/run/ArgsIndex.ts"

describe("ArgsIndex", () => {
  it("files values per tool and key, latest last; another tool's or key's are apart", () => {
    const index = ArgsIndex.make<string>()
    index.add("bash", "k1", "c-1")
    index.add("bash", "k1", "c-2")
    index.add("bash", "k2", "c-3")
    index.add("read", "k1", "c-4")
    expect(index.get("bash", "k1")).toEqual(["c-1", "c-2"])
    expect(index.get("bash", "k2")).toEqual(["c-3"])
    expect(index.get("read", "k1")).toEqual(["c-4"])
    expect(index.get("write", "k1")).toEqual([])
  })

  it("remove takes the latest filing of a value out, and only that one", () => {
    const index = ArgsIndex.make<string>()
    index.add("bash", "k", "a")
    index.add("bash", "k", "b")
    index.add("bash", "k", "a")
    index.remove("bash", "k", "a")
    expect(index.get("bash", "k")).toEqual(["a", "b"])
    index.remove("bash", "k", "missing")
    index.remove("other", "k", "a")
    expect(index.get("bash", "k")).toEqual(["a", "b"])
    index.remove("bash", "k", "a")
    index.remove("bash", "k", "b")
    expect(index.get("bash", "k")).toEqual([])
    index.add("bash", "k", "c")
    expect(index.get("bash", "k")).toEqual(["c"])
  })
})
