#!/bin/bash
# One jq for the whole session: it reads the requests one a line and writes one reply to each. --unbuffered writes
# each reply at once (otherwise jq holds its output when stdout is a pipe, and the host waits for it).
exec jq -c --unbuffered 'if .event == "tool_result"
                         then {content: (.content | gsub("AKIA[A-Z0-9]{16}"; "[redacted]"))}
                         else {} end'
