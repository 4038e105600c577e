// The no-op extension: reads a line, writes `{}`. Plain JavaScript with no imports on purpose: it is the cheapest
// extension Node can run (a .ts file costs ~25 ms more to start, for type stripping), so neither the per-event
// spawn baseline nor startup is inflated by the extension itself. It never holds a request: it only looks for
// line ends (and whether the line had anything but whitespace), so an 8 MiB request costs it one pass over the
// bytes. Exits when stdin closes (nothing else keeps it alive).
let content = false // the current line has a non-whitespace character
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk) => {
  let replies = ""
  let start = 0
  let nl = chunk.indexOf("\n")
  while (nl !== -1) {
    if (content || /\S/.test(chunk.slice(start, nl))) replies += "{}\n"
    content = false
    start = nl + 1
    nl = chunk.indexOf("\n", start)
  }
  if (!content && start < chunk.length) content = /\S/.test(chunk.slice(start))
  if (replies !== "") process.stdout.write(replies)
})
