#!/usr/bin/env bash
# Builds Samples/FanOutService (Hummingbird + Curlew in a ServiceGroup) and proves a graceful
# shutdown: a request in flight when the service gets SIGTERM still finishes with 200 (its three
# upstream calls drain through the TransportService), the service exits 0, a request after
# SIGTERM is not served, and Curlew's log lines carry the incoming request's hb.request.id.
# Also: a request's budget (`?budget=<ms>`, withDeadline in the handler) cuts its upstream calls
# off with .deadlineExceeded and the service answers 504.
#   bash scripts/check-fanout-service.sh [extra `swift build` arguments]
# Built as the FanOutService target of Integration/ServerNames (whose Sources/FanOutService links
# to the sample's sources), so the test run compiles Hummingbird and SwiftNIO once for this check
# and scripts/check-server-names.sh. CURLEW_FANOUT_PACKAGE=Samples/FanOutService builds the sample's
# own package instead (its own scratch path; sharing one scratch path between two root packages
# left SwiftPM reusing the other package's stale build plan).
set -euo pipefail
cd "$(dirname "$0")/.."

pkg=${CURLEW_FANOUT_PACKAGE:-Integration/ServerNames}
swift build --package-path "$pkg" --product FanOutService "$@"
binary="$(swift build --package-path "$pkg" --show-bin-path "$@")/FanOutService"

work=$(mktemp -d)
upstream_pid=""
service_pid=""
cleanup() {
    [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null || true
    [ -n "$upstream_pid" ] && kill "$upstream_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
wait_for_port() {
    for _ in $(seq 1 100); do
        if python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('127.0.0.1', $1)))"; then return 0; fi
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    return 1
}
fail() { echo "check-fanout-service: FAIL: $*" >&2; echo "--- service log"; cat "$work/service.log"; exit 1; }

upstream_port=$(free_port)
"$binary" upstream "$upstream_port" > "$work/upstream.log" 2>&1 &
upstream_pid=$!
wait_for_port "$upstream_port"

service_port=$(free_port)
"$binary" serve "$service_port" "http://127.0.0.1:$upstream_port" > "$work/service.log" 2>&1 &
service_pid=$!
wait_for_port "$service_port"

# A quick request first: the fan-out works.
curl -sS --max-time 10 "http://127.0.0.1:$service_port/portfolio" > "$work/quick.json"
grep -q '"total":' "$work/quick.json" || fail "quick request: $(cat "$work/quick.json")"

# The handler's budget reaches its upstream calls: upstream calls of 5 s under a budget of 300 ms
# are cut off at the deadline, and the service answers 504 (long before the upstream would have).
budget_status=$(curl -sS --max-time 10 -o "$work/budget.json" -w '%{http_code}' "http://127.0.0.1:$service_port/portfolio?delay=5000&budget=300")
[ "$budget_status" = "504" ] || fail "a spent budget answered $budget_status: $(cat "$work/budget.json")"
grep -q 'deadlineExceeded' "$work/service.log" || fail "the upstream calls did not fail with deadlineExceeded"

# A slow request (each upstream call takes 1.5 s), SIGTERM while it is in flight.
curl -sS --max-time 20 -o "$work/slow.json" -w '%{http_code}' "http://127.0.0.1:$service_port/portfolio?delay=1500" > "$work/slow.status" &
curl_pid=$!
for _ in $(seq 1 50); do grep -q 'delay_ms=1500' "$work/service.log" && break; sleep 0.1; done
grep -q 'delay_ms=1500' "$work/service.log" || fail "the slow request never arrived"
sleep 0.3
kill -TERM "$service_pid"
sleep 0.2
# After SIGTERM the server accepts nothing new.
if curl -sS --max-time 2 -o /dev/null "http://127.0.0.1:$service_port/portfolio" 2>/dev/null; then
    fail "a request after SIGTERM was served"
fi
wait "$curl_pid" || fail "the in-flight request failed (curl exit $?)"
status=0
wait "$service_pid" || status=$?
service_pid=""
[ "$(cat "$work/slow.status")" = "200" ] || fail "in-flight request answered $(cat "$work/slow.status"): $(cat "$work/slow.json")"
grep -q '"total":' "$work/slow.json" || fail "in-flight request body: $(cat "$work/slow.json")"
[ "$status" = 0 ] || fail "the service exited with $status"

# Curlew's own debug line for an upstream call carries the incoming request's id.
request_id=$(grep 'delay_ms=1500' "$work/service.log" | sed -n 's/.*hb.request.id=\([^ ]*\).*/\1/p' | head -n1)
[ -n "$request_id" ] || fail "no hb.request.id in the service's log"
grep "quote/ACME?delay=1500 → 200" "$work/service.log" | grep -q "hb.request.id=$request_id" \
    || fail "Curlew's log line does not carry hb.request.id=$request_id"
grep "upstream.in_flight=0" "$work/service.log" | grep -q "stopped" || fail "the service did not stop with an idle transport"
echo "check-fanout-service: OK (spent budget: 504; in-flight request drained on SIGTERM: 200; exit 0; log lines carry hb.request.id=$request_id)"
