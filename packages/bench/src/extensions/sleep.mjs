// The sleeping extension: replies `{}` to tool_call after N ms (argv[2], else $SLEEP_MS, else 50), and at once to
// everything else so startup is not slowed. Requests are answered in order, one at a time, as the protocol asks.
const ms = Number(process.argv[2] ?? process.env.SLEEP_MS ?? 50)
const queue = []
let busy = false
const next = () => {
  const line = queue.shift()
  if (line === undefined) {
    busy = false
    return
  }
  busy = true
  const slow = line.includes('"event":"tool_call"')
  if (slow)
    setTimeout(() => {
      process.stdout.write("{}\n")
      next()
    }, ms)
  else {
    process.stdout.write("{}\n")
    next()
  }
}
let buffered = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk) => {
  buffered += chunk
  let nl = buffered.indexOf("\n")
  while (nl !== -1) {
    const line = buffered.slice(0, nl)
    buffered = buffered.slice(nl + 1)
    if (line.trim() !== "") queue.push(line)
    nl = buffered.indexOf("\n")
  }
  if (!busy) next()
})
