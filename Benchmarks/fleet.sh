#!/usr/bin/env bash
# The fleet's second-tier read through postgres-nio against pgbench's floor for the same query,
# one PostgreSQL, one run (BENCHMARKS.md, "Fleet"): starts PostgreSQL (scripts/postgres.sh),
# writes a 225-byte entry through FleetCacheStorage, times pgbench (prepared, one client) reading
# it by primary key, then the Swift rows (FleetBenchmark, release build).
#
#   bash Benchmarks/fleet.sh [seconds-of-pgbench] [swift-reads]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PGBENCH="${1:-10}"
READS="${2:-20000}"
CONCURRENCY="${3:-16}"
trap 'bash scripts/postgres.sh stop' EXIT
eval "$(bash scripts/postgres.sh start)"
swift build -c release --package-path Benchmarks --product FleetBenchmark >&2
BIN="$(swift build -c release --package-path Benchmarks --show-bin-path)/FleetBenchmark"
"$BIN" "$CURLEW_POSTGRES_URL" --prepare-only
SCRIPT="$(mktemp)"
cat >"$SCRIPT" <<'SQL'
SELECT payload, tags, etag, last_modified, expires_at FROM curlew_bench.curlew_fleet_entries WHERE key = 'bench' AND (expires_at IS NULL OR expires_at > now());
SQL
echo "pgbench (prepared, 1 client, ${SECONDS_PGBENCH}s), the same primary-key read:"
pgbench -h 127.0.0.1 -p "$CURLEW_POSTGRES_PORT" -U curlew -n -M prepared -c 1 -T "$SECONDS_PGBENCH" -f "$SCRIPT" postgres \
    | grep -E "latency average|tps"
echo "pgbench (prepared, $CONCURRENCY clients, 2 threads, ${SECONDS_PGBENCH}s):"
pgbench -h 127.0.0.1 -p "$CURLEW_POSTGRES_PORT" -U curlew -n -M prepared -c "$CONCURRENCY" -j 2 -T "$SECONDS_PGBENCH" -f "$SCRIPT" postgres \
    | grep -E "latency average|tps"
rm -f "$SCRIPT"
"$BIN" "$CURLEW_POSTGRES_URL" "$READS" --concurrency "$CONCURRENCY" ${4:-}
