#!/bin/bash
# Without jq every path would read as "" and every call pass: refuse to start instead (the host says why).
command -v jq >/dev/null || { echo "block-secrets.sh: jq is not installed (apt-get install jq)" >&2; exit 1; }
while IFS= read -r line; do
  # One jq per request (each is a process to start): the path, if the call is a read.
  path=$(jq -r 'select(.tool == "read") | .args.path // ""' <<<"$line")
  if [[ "$path" == *secret* ]]; then
    echo '{"block":true,"reason":"secrets are off limits"}'
  else
    echo '{}'
  fi
done
