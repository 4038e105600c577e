// The no-op extension that echoes ids (docs/design.md#wire-protocol): reads a line, writes `{"id": <the request's id>}`. Plain
// JavaScript with no imports, like noop.mjs; each request line is parsed (JSON.parse), which is what echoing costs
// an extension that otherwise would not look at the request. Exits when stdin closes.
let pending = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk) => {
  pending += chunk
  let replies = ""
  let nl = pending.indexOf("\n")
  while (nl !== -1) {
    const line = pending.slice(0, nl)
    pending = pending.slice(nl + 1)
    if (/\S/.test(line)) replies += `${JSON.stringify({ id: JSON.parse(line).id })}\n`
    nl = pending.indexOf("\n")
  }
  if (replies !== "") process.stdout.write(replies)
})
