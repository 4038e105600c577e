#!/bin/bash
# A Claude Code PreToolUse hook of the common shape: reads its input, answers in JSON (here: allow, a no-op here).
cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'
