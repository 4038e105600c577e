#!/bin/bash
while IFS= read -r line; do
  # One jq per request (each is a process to start): the path, if the call is a read.
  path=$(jq -r 'select(.tool == "read") | .args.path // ""' <<<"$line")
  if [[ "$path" == *secret* ]]; then
    echo '{"block":true,"reason":"secrets are off limits"}'
  else
    echo '{}'
  fi
done
