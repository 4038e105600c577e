import * as NodeChildProcess from "node:child_process"

/**
 * The extensions' process groups this process has started and not yet seen end, known to a small watcher process of
 * its own (docs/failures.md#termination-and-cleanup). A host that is killed outright (SIGKILL, the OOM killer)
 * runs no close sequence; an extension that ignores the end of its stdin, and what it started, would run on. The
 * watcher reads this process's lines on a pipe; when the pipe ends (this process is gone, however it ended) it sends
 * SIGTERM to every group still listed, waits the longest grace it was told, and sends SIGKILL. A group is listed at
 * spawn and struck off once the host has seen it gone (`ProcessGroup.terminate`), never before: a group id is not
 * reused while any member lives, and one struck off is never signalled.
 *
 * One `sh` per process, started with the first extension, in a session of its own (no terminal's SIGINT or SIGHUP
 * reaches it, and it ignores them anyway), holding nothing of the host open: `unref`ed, so it never keeps this
 * process alive. Where it cannot start (no `/bin/sh`, Windows) the host goes on as before.
 */

/** `$0` of the watcher, so it can be told apart in a process list. */
export const ReaperName = "abhed-reaper"

// `+ PGID GRACE_MS` lists a group, `- PGID` strikes it off; at the end of input, TERM, the grace, KILL.
const Script = `trap '' INT TERM HUP QUIT PIPE
gs=" "; grace=0
while read -r op g ms; do
  case "$g" in ""|*[!0-9]*) continue ;; esac
  case "$op" in
    +) gs="$gs$g "
       case "$ms" in ""|*[!0-9]*) ;; *) [ "$ms" -gt "$grace" ] && grace=$ms ;; esac ;;
    -) case "$gs" in *" $g "*) gs="\${gs%% $g *} \${gs#* $g }" ;; esac ;;
  esac
done
set -- $gs
[ $# -eq 0 ] && exit 0
for g; do kill -TERM -"$g" 2>/dev/null; done
sleep $(( (grace + 999) / 1000 ))
for g; do kill -KILL -"$g" 2>/dev/null; done
`

interface Reaper {
  readonly pid: number | undefined
  readonly write: (line: string) => void
}

let reaper: Reaper | undefined
let started = false
/** What the watcher has been told is listed, as this process sees it. */
const listedNow = new Set<number>()

const start = (): Reaper | undefined => {
  if (process.platform === "win32") return undefined
  try {
    const child = NodeChildProcess.spawn("/bin/sh", ["-c", Script, ReaperName], {
      detached: true,
      // Not the host's folder: a watcher that outlives the host by a grace must not hold it (an unmount, a rmdir).
      cwd: "/",
      stdio: ["pipe", "ignore", "ignore"],
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" }
    })
    // A watcher that could not start or went away: the host goes on without one.
    const gone = () => {
      reaper = undefined
    }
    child.on("error", gone)
    child.on("exit", gone)
    child.stdin.on("error", gone)
    child.unref()
    const stdin: unknown = child.stdin
    if (typeof stdin === "object" && stdin !== null && "unref" in stdin && typeof stdin.unref === "function")
      stdin.unref()
    return {
      pid: child.pid,
      write: (line) => {
        if (child.stdin.writable) child.stdin.write(line)
      }
    }
  } catch {
    return undefined
  }
}

/** Lists `pgid` (an extension just spawned, leading its own group), to be ended `graceMillis` after a TERM. */
export const watch = (pgid: number, graceMillis: number): void => {
  if (!started) {
    started = true
    reaper = start()
  }
  listedNow.add(pgid)
  reaper?.write(`+ ${pgid} ${Math.max(0, Math.round(graceMillis))}\n`)
}

/** Strikes `pgid` off: the host has seen the whole group gone. */
export const forget = (pgid: number): void => {
  if (!listedNow.delete(pgid)) return
  reaper?.write(`- ${pgid}\n`)
}

/** The groups listed now: those this process started and has not seen end. */
export const listed = (): ReadonlySet<number> => listedNow

/** The watcher's pid, if one runs (for tests that count this process's children). */
export const reaperPid = (): number | undefined => reaper?.pid
