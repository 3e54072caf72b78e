#!/usr/bin/env bash
# Started by the test suite itself when it runs without scripts/test.sh — a plain `swift test` —
# (Tests/TestSupport/TestServers.swift): installs what the servers need
# (scripts/ensure-deps.sh), starts them (scripts/test-servers.sh), prints their `CURLEW_*`
# variables one per line, then `ready`, and keeps them running until its standard input closes,
# which happens when the test process ends, however it ends. Then it stops them.
# Everything but the variables and `ready` goes to standard error.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh >&2
source scripts/test-servers.sh >&2
env | grep '^CURLEW_' || true
echo ready
exec >/dev/null 2>&1
cat >/dev/null || true
