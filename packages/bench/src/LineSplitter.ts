/**
 * The raw baseline's line splitter: the least a client can do to cut a byte stream into lines. Chunks are kept
 * as Buffers and joined only when a newline arrives, so a large reply costs one copy, not one per chunk.
 */
export interface LineSplitter {
  /** Feed a chunk; returns the complete lines it ended (without their "\n"), possibly none. */
  readonly push: (chunk: Buffer) => ReadonlyArray<string>
}

export const makeLineSplitter = (): LineSplitter => {
  let pending: Array<Buffer> = []
  return {
    push: (chunk) => {
      let nl = chunk.indexOf(10)
      if (nl === -1) {
        pending.push(chunk)
        return []
      }
      const lines: Array<string> = []
      let start = 0
      while (nl !== -1) {
        const piece = chunk.subarray(start, nl)
        const line = pending.length === 0 ? piece.toString("utf8") : Buffer.concat([...pending, piece]).toString("utf8")
        pending = []
        if (line.trim() !== "") lines.push(line)
        start = nl + 1
        nl = chunk.indexOf(10, start)
      }
      if (start < chunk.length) pending.push(chunk.subarray(start))
      return lines
    }
  }
}
