#!/usr/bin/env bash
# Two instances of the Hummingbird sample (Samples/FanOutService, `serve … --fleet <url>`) on one
# private PostgreSQL (scripts/postgres.sh), in front of the sample's upstream, which counts the
# requests it gets per symbol and its peak concurrency. Shows, and checks:
#   1. a popular key missed by 2 × 50 concurrent callers (half on each instance) reaches the
#      upstream once;
#   2. a purge on instance A evicts the key from instance B's memory (B's next call goes to the
#      upstream: one more request);
#   3. the `partner` queue's limit of 4 holds across both instances (2 × 12 concurrent calls: the
#      upstream's peak concurrency is 4, not 8).
#
#   bash scripts/fleet-two-instances.sh [extra `swift build` arguments]
# Builds the sample's own package (Hummingbird, postgres-nio: several minutes the first time).
set -euo pipefail
cd "$(dirname "$0")/.."

# Its own scratch path under the root's .build: nothing of the build lands in the sample's
# directory (which scripts/lint.sh checks), and no other root package shares it.
build=(swift build --package-path Samples/FanOutService --scratch-path "$PWD/.build/fanout-fleet" --product FanOutService "$@")
"${build[@]}" >&2
binary="$("${build[@]}" --show-bin-path)/FanOutService"

# A PostgreSQL of its own (.postgres-test-two-instances/), so the test suite's is left alone.
export CURLEW_POSTGRES_NAME=two-instances
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    bash scripts/postgres.sh stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
eval "$(bash scripts/postgres.sh start)"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
wait_for_port() {
    for _ in $(seq 1 200); do
        if python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('127.0.0.1', $1)))"; then return 0; fi
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    return 1
}
fail() {
    echo "fleet-two-instances: FAIL: $*" >&2
    for log in "$work"/*.log; do echo "--- $log"; grep -v "debug curlew:" "$log" | tail -n 20; done
    exit 1
}
stat() { curl -sS "http://127.0.0.1:$upstream_port/stats$1"; }
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {}, d))" "$1"; }

upstream_port=$(free_port)
"$binary" upstream "$upstream_port" >"$work/upstream.log" 2>&1 &
pids+=($!)
wait_for_port "$upstream_port"

port_a=$(free_port)
# A soft timeout of 2 s instead of the library's 5 ms: a debug build on a loaded two-core
# machine often takes longer than 5 ms to hear from PostgreSQL, and then (rightly) goes on
# without it — to the upstream.
"$binary" serve "$port_a" "http://127.0.0.1:$upstream_port" --fleet "$CURLEW_POSTGRES_URL" --soft-timeout 2000 >"$work/a.log" 2>&1 &
pids+=($!)
port_b=$(free_port)
CURLEW_FLEET_URL="$CURLEW_POSTGRES_URL" "$binary" serve "$port_b" "http://127.0.0.1:$upstream_port" --soft-timeout 2000 >"$work/b.log" 2>&1 &
pids+=($!)
wait_for_port "$port_a"
wait_for_port "$port_b"
echo "PostgreSQL $CURLEW_POSTGRES_URL; upstream :$upstream_port; instance A :$port_a, instance B :$port_b (same database)"
# The fleet limiter holds the partner queue until its first lease; the stores migrate on first use.
# 20 concurrent calls of another key warm each instance's connection pool.
sleep 1
for i in $(seq 1 20); do
    curl -sS -o /dev/null "http://127.0.0.1:$port_a/quote/WARMUP" &
    curl -sS -o /dev/null "http://127.0.0.1:$port_b/quote/WARMUP" &
done
wait_count=0
while [ "$(stat "" | field 'requests.get("WARMUP", 0)')" -lt 1 ] && [ $wait_count -lt 100 ]; do sleep 0.1; wait_count=$((wait_count + 1)); done
sleep 2

# 1. One popular key, 50 concurrent callers on each instance, an upstream that takes 300 ms.
for i in $(seq 1 50); do
    curl -sS -w ' %{http_code}\n' "http://127.0.0.1:$port_a/quote/ACME?delay=300" >>"$work/popular.txt" &
    curl -sS -w ' %{http_code}\n' "http://127.0.0.1:$port_b/quote/ACME?delay=300" >>"$work/popular.txt" &
done
wait_count=0
while [ "$(wc -l <"$work/popular.txt")" -lt 100 ] && [ $wait_count -lt 300 ]; do sleep 0.1; wait_count=$((wait_count + 1)); done
answered=$(grep -c ' 200$' "$work/popular.txt" || true)
acme=$(stat "" | field 'requests.get("ACME", 0)')
echo "1. 100 concurrent GET /quote/ACME (50 on A, 50 on B): $answered answered 200; the upstream saw $acme request(s) for ACME"
echo "   where the answers came from: $(sed -n 's/.*"source":"\([a-z]*\)".*/\1/p' "$work/popular.txt" | sort | uniq -c | tr '\n' ';' | tr -s ' ')"
echo "   A: $(curl -sS "http://127.0.0.1:$port_a/fleet")"
echo "   B: $(curl -sS "http://127.0.0.1:$port_b/fleet")"
[ "$answered" = 100 ] || fail "not every caller was answered"
[ "$acme" = 1 ] || fail "the upstream saw $acme requests for the popular key, expected 1"

# 2. Both instances hold ACME in memory now; a purge on A evicts it from B too.
source_b=$(curl -sS "http://127.0.0.1:$port_b/quote/ACME?delay=300" | field source)
heard_before=$(curl -sS "http://127.0.0.1:$port_b/fleet" | field invalidationsReceived)
echo "2. GET on B before the purge: source $source_b (upstream requests for ACME: $(stat "" | field 'requests.get("ACME", 0)'))"
echo "   POST /purge/ACME on A: $(curl -sS -X POST "http://127.0.0.1:$port_a/purge/ACME")"
for _ in $(seq 1 100); do
    [ "$(curl -sS "http://127.0.0.1:$port_b/fleet" | field invalidationsReceived)" -gt "$heard_before" ] && break
    sleep 0.02
done
heard_after=$(curl -sS "http://127.0.0.1:$port_b/fleet" | field invalidationsReceived)
source_b=$(curl -sS "http://127.0.0.1:$port_b/quote/ACME?delay=300" | field source)
acme=$(stat "" | field 'requests.get("ACME", 0)')
echo "   B heard $((heard_after - heard_before)) invalidation(s); GET on B after the purge: source $source_b; upstream requests for ACME: $acme"
[ "$heard_after" -gt "$heard_before" ] || fail "B did not hear the purge"
[ "$acme" = 2 ] || fail "after the purge the upstream saw $acme requests for ACME, expected 2"

# 3. The partner queue's fleet limit: 12 concurrent calls on each instance, 400 ms each.
stat "?reset=1" >/dev/null
for i in $(seq 1 12); do
    curl -sS -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:$port_a/partner?delay=400" >>"$work/partner.txt" &
    curl -sS -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:$port_b/partner?delay=400" >>"$work/partner.txt" &
done
wait_count=0
while [ "$(wc -l <"$work/partner.txt")" -lt 24 ] && [ $wait_count -lt 600 ]; do sleep 0.1; wait_count=$((wait_count + 1)); done
answered=$(grep -c '^200' "$work/partner.txt" || true)
upstream=$(stat "")
peak=$(echo "$upstream" | field peak)
partner=$(echo "$upstream" | field 'requests.get("PARTNER", 0)')
echo "3. 24 concurrent GET /partner (12 on A, 12 on B), fleet limit 4: $answered answered 200; the upstream served $partner, at most $peak at once"
[ "$answered" = 24 ] || fail "not every partner call was answered"
[ "$peak" -le 4 ] || fail "the upstream saw $peak partner calls at once, the fleet limit is 4"
echo "fleet-two-instances: OK"
