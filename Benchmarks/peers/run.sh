#!/usr/bin/env bash
# Runs the peer clients (Go net/http, Rust reqwest) with the load of CurlewBenchmark against
# the nginx that Benchmarks/run.sh serves, and prints their rows as a Markdown table in the
# Swift benchmark's columns.
#
#   BENCH_NGINX_ONLY=1 bash Benchmarks/run.sh           # start nginx, leave it running
#   bash Benchmarks/peers/run.sh [PORT] [ARGS...]       # PORT: $BENCH_PORT or 18089
#   kill -QUIT "$(cat Benchmarks/.nginx/nginx.pid)"     # stop nginx
#
# ARGS pass through to both programs, e.g. --requests 5000 --warmup 200 --concurrency 1,16,64
# --rounds 3 (the defaults, but rounds 1); --clients go-net-http,rust-reqwest picks which run.
#   --no-header            only the rows (Benchmarks/run.sh --peers appends them to its table)
#   --instructions [N]     instructions per request under callgrind instead of timings:
#                          (Ir(3N) - Ir(N)) / 2N with /work/shared/tools/instructions-per-request
#                          or the same computation here, N = 2000 by default. Go runs with
#                          GODEBUG=asyncpreemptoff=1: callgrind 3.19 asserts on the SIGURG
#                          preemption signals of Go's runtime otherwise.
# Builds the programs first (peers/build.sh) when they are missing. PEERS_PREFIX="taskset -c 0"
# runs them under a prefix command (Benchmarks/run.sh --pin).
set -euo pipefail
PEERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="$(dirname "$PEERS_DIR")"
BIN="$PEERS_DIR/.bin"

PORT="${BENCH_PORT:-18089}"
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then PORT=$1; shift; fi

CLIENTS="go-net-http,rust-reqwest"
HEADER=1
MODE=timing
IPR_REQUESTS=2000
LEVELS="1,16,64"
PASS=()
while (($#)); do
    case "$1" in
        --clients) CLIENTS="$2"; shift ;;
        --no-header) HEADER=0 ;;
        --instructions)
            MODE=instructions
            if [[ "${2:-}" =~ ^[0-9]+$ ]]; then IPR_REQUESTS=$2; shift; fi ;;
        --concurrency|-c) LEVELS="$2"; shift ;;
        *) PASS+=("$1") ;;
    esac
    shift
done
read -ra PREFIX <<<"${PEERS_PREFIX:-}"

IFS=, read -ra clients <<<"$CLIENTS"
for client in "${clients[@]}"; do
    case "$client" in
        go-net-http|rust-reqwest) ;;
        *) echo "peers/run.sh: unknown client \"$client\" (go-net-http, rust-reqwest)" >&2; exit 64 ;;
    esac
    [[ -x "$BIN/$client" ]] || bash "$PEERS_DIR/build.sh"
done

BODY_BYTES=$(stat -c %s "$BENCH_DIR/.nginx/static/small.json" 2>/dev/null || true)
if [[ -z "$BODY_BYTES" ]] || ! (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    echo "peers/run.sh: no nginx on 127.0.0.1:$PORT; start it with BENCH_NGINX_ONLY=1 bash Benchmarks/run.sh" >&2
    exit 1
fi
COMMON=(--url "http://127.0.0.1:$PORT/small.json" --expected-bytes "$BODY_BYTES")

if [[ "$MODE" == instructions ]]; then
    command -v valgrind >/dev/null || { echo "peers/run.sh: --instructions needs valgrind (apt-get install valgrind)" >&2; exit 2; }
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    # One callgrind run of N requests after the programs' 200 warm-up requests; prints Ir.
    collected() {
        local requests=$1 client=$2 level=$3
        GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
            "$BIN/$client" "${COMMON[@]}" "${PASS[@]}" --concurrency "$level" --requests "$requests" \
            >"$work/log" 2>&1 || { tail -20 "$work/log" >&2; return 1; }
        grep -oE 'Collected : [0-9]+' "$work/log" | grep -oE '[0-9]+'
    }
    if ((HEADER)); then
        echo "| client | c | instructions/request |"
        echo "|---|---:|---:|"
    fi
    IFS=, read -ra levels <<<"$LEVELS"
    for level in "${levels[@]}"; do
        for client in "${clients[@]}"; do
            echo "peers/run.sh: callgrind $client c=$level" >&2
            small=$(collected "$IPR_REQUESTS" "$client" "$level")
            large=$(collected $((3 * IPR_REQUESTS)) "$client" "$level")
            echo "| $client | $level | $(( (large - small) / (2 * IPR_REQUESTS) )) |"
        done
    done
    exit 0
fi

status=0
first=$HEADER
for client in "${clients[@]}"; do
    header=(--no-header)
    ((first)) && header=()
    first=0
    "${PREFIX[@]}" "$BIN/$client" "${COMMON[@]}" --status-url "http://127.0.0.1:$PORT/nginx_status" \
        --concurrency "$LEVELS" "${header[@]}" "${PASS[@]}" || status=$?
done
exit "$status"
