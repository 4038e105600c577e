#!/usr/bin/env python3
"""audit_logger: an audit trail of every event on stderr, and approval for tool calls that touch production.

    python3 audit_logger.py
    AUDIT_PROD_HOSTS='prod.*,*.prod.example.com' python3 audit_logger.py

Subscribe it to all events. For each request it writes one JSON audit line to stderr (never stdout: stdout
carries replies only) and exactly one reply to stdout, flushed at once. A tool_call whose `command`, `url` or
`host` argument names a host matching AUDIT_PROD_HOSTS (fnmatch globs, comma separated) is sent to an approval
prompt with {"ask": true}; everything else gets {} (no opinion). Standard library only.
"""
import fnmatch
import json
import os
import re
import sys
import time

DEFAULT_PROD_HOSTS = "prod.*,prod-*,*.prod.*,*-prod.*,production.*,*.production.*"
PROD_HOSTS = [g.strip() for g in os.environ.get("AUDIT_PROD_HOSTS", DEFAULT_PROD_HOSTS).split(",") if g.strip()]

# Dotted names, optionally after a scheme (https://) and/or a user (deploy@): "deploy@db.prod.example.com".
HOST = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*://)?(?:[^@\s/'\"]+@)?([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")

# The arguments that name where a call goes. Matching these fields, not the whole request line, keeps a
# description such as "do not touch prod.example.com" from triggering a prompt.
HOST_FIELDS = ("command", "url", "host")


def audit(record):
    print(json.dumps({"ts": round(time.time(), 3), **record}), file=sys.stderr, flush=True)


def production_hosts(args):
    found = []
    for field in HOST_FIELDS:
        value = args.get(field) if isinstance(args, dict) else None
        if not isinstance(value, str):
            continue
        for host in HOST.findall(value):
            if any(fnmatch.fnmatch(host.lower(), glob) for glob in PROD_HOSTS) and host not in found:
                found.append(host)
    return found


def handle(request):
    event = request.get("event")
    record = {"event": event, "session_id": request.get("session_id")}
    for key in ("call_id", "tool", "round"):
        if key in request:
            record[key] = request[key]
    reply = {}
    if event == "tool_call":
        hosts = production_hosts(request.get("args"))
        if hosts:
            reply = {"ask": True, "reason": "touches production: " + ", ".join(hosts)}
    elif event == "tool_result":
        record["is_error"] = request.get("is_error")
        record["content_chars"] = len(request.get("content") or "")
    elif event in ("context", "before_compact"):
        record["messages"] = len(request.get("messages") or [])
    record["reply"] = reply
    audit(record)
    return reply


def main():
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            continue  # blank lines are not requests
        try:
            request = json.loads(line)
            reply = handle(request) if isinstance(request, dict) else {}
        except Exception as error:  # one bad request must not cost a reply or kill the extension
            audit({"error": repr(error)})
            reply = {}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
