#!/usr/bin/env bash
# Issue 26's event-stream soak, measured (not part of the test suite or CI):
#
#   bash scripts/sse-soak.sh                     # DURATION=180 s with 200 streams open
#   DURATION=600 STREAMS=200 INTERVAL_MS=100 RATE=20 BASELINE=30 bash scripts/sse-soak.sh
#
# Builds Benchmarks' SSESoak in release mode, starts its server (a LoopbackServer that sends every
# open stream an event every INTERVAL_MS) as one process and its client (the generated client of
# Benchmarks/openapi-sse on CurlewTransport) as another: BASELINE seconds of ordinary calls (RATE
# per second, one at a time) with no stream open, then STREAMS streams opened and held for
# DURATION seconds while the same calls continue; then every stream is finished and checked (every
# event the server sent arrived, in order). Prints the calls' p50/p99 in both phases, the events,
# the client's resident memory and CPU time and the connections left; exits 1 when a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-180}"
STREAMS="${STREAMS:-200}"
INTERVAL_MS="${INTERVAL_MS:-100}"
RATE="${RATE:-20}"
BASELINE="${BASELINE:-30}"

# A stale build plan once kept files moved between modules as missing inputs (as run.sh).
rm -f Benchmarks/.build/release.yaml
swift build -c release --package-path Benchmarks --product SSESoak >&2
BIN="$(swift build -c release --package-path Benchmarks --show-bin-path)/SSESoak"

work="$(mktemp -d)"
server_pid=""
cleanup() {
    # The run's status, not the stopped server's (143), is the script's.
    local status=$?
    [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
# 200 streams, their calls and the server's side of each: well above a default 1024 descriptors.
ulimit -n 8192 2>/dev/null || true

"$BIN" serve --port-file "$work/port" --interval-ms "$INTERVAL_MS" &
server_pid=$!
for _ in $(seq 100); do
    [[ -s "$work/port" ]] && break
    sleep 0.1
done
[[ -s "$work/port" ]] || { echo "sse-soak.sh: the server did not start" >&2; exit 1; }
PORT="$(cat "$work/port")"
echo "sse-soak.sh: server on 127.0.0.1:$PORT (pid $server_pid), an event every $INTERVAL_MS ms per stream; $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$BIN" run --url "http://127.0.0.1:$PORT" --streams "$STREAMS" --duration "$DURATION" --baseline "$BASELINE" --rate "$RATE"
echo "sse-soak.sh: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
