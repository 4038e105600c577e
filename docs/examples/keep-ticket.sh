#!/bin/bash
# One jq for the whole session, as in redact-akia.sh: a reply to every request, the summary to before_compact.
exec jq -c --unbuffered 'if .event == "before_compact"
                         then {summary: "Working on ticket ABC-123. Keep the ticket id."}
                         else {} end'
