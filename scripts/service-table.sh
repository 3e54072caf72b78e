#!/usr/bin/env bash
# The FanOutService handler on Curlew and on AsyncHTTPClient, side by side (issue 31's table):
# each incoming GET /portfolio fans out three upstream GETs to nginx; wrk drives the service.
#
#   bash scripts/service-table.sh            # c=64 and c=256, uncapped and capped, 20 s each
#   DURATION=60 bash scripts/service-table.sh
#   ROWS="64:16" CLIENTS=curlew FANOUT_ENGINES=1 bash scripts/service-table.sh   # a subset
#
# Per row: requests/s and p99 from wrk (--latency), and the service process's CPU per incoming
# request (the sum of /proc/<pid>/task/*/schedstat over the measured run, divided by the requests
# wrk completed). Installs wrk and nginx when missing. Everything shares the machine's cores
# (wrk, nginx, the service), so compare rows of one run, not runs.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DURATION="${DURATION:-20}"
UPSTREAM_PORT="${UPSTREAM_PORT:-18190}"
SERVICE_PORT="${SERVICE_PORT:-18191}"
ROWS="${ROWS:-64:- 64:16 256:- 256:64}" # wrk connections:connections per host (- for none)
CLIENTS="${CLIENTS:-curlew ahc}"

for tool in wrk nginx; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        apt-get install -y "$tool" >&2 || { apt-get update >&2 && apt-get install -y "$tool" >&2; }
    fi
done

work="$(mktemp -d)"
service_pid=""
cleanup() {
    [[ -n "$service_pid" ]] && kill "$service_pid" 2>/dev/null || true
    [[ -f "$work/nginx.pid" ]] && kill -QUIT "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# The upstream: every quote a fixed JSON answer, connections kept (as a partner API would).
mkdir -p "$work/logs"
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_timeout 300s;
    keepalive_requests 1000000;
    client_body_temp_path $work/body; proxy_temp_path $work/proxy; fastcgi_temp_path $work/fcgi;
    uwsgi_temp_path $work/uwsgi; scgi_temp_path $work/scgi;
    server {
        listen 127.0.0.1:$UPSTREAM_PORT;
        location ~ ^/quote/(\w+)\$ { default_type application/json; return 200 '{"symbol":"\$1","price":300}'; }
    }
}
CONF
nginx -c "$work/nginx.conf" -p "$work"

echo "service-table: building FanOutBench (release)" >&2
swift build -c release --package-path "$repo/Samples/FanOutService" --product FanOutBench >&2
binary="$(swift build -c release --package-path "$repo/Samples/FanOutService" --show-bin-path)/FanOutBench"

cpu_ns() { # every thread's CPU time so far, in ns
    local total=0
    for stat in /proc/"$1"/task/*/schedstat; do
        read -r ns _ <"$stat" && total=$((total + ns))
    done
    echo "$total"
}

echo "| client | c | connections per host | requests/s | p50 ms | p99 ms | CPU µs/request |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for row in $ROWS; do
    connections="${row%%:*}"
    cap="${row#*:}"
    for client in $CLIENTS; do
        arguments=("$client" "$SERVICE_PORT" "http://127.0.0.1:$UPSTREAM_PORT")
        [[ "$cap" != "-" ]] && arguments+=("$cap")
        "$binary" "${arguments[@]}" >"$work/service.log" 2>&1 &
        service_pid=$!
        for _ in $(seq 100); do
            curl -sf "http://127.0.0.1:$SERVICE_PORT/portfolio" >/dev/null 2>&1 && break
            sleep 0.1
        done
        url="http://127.0.0.1:$SERVICE_PORT/portfolio"
        wrk -t2 -c"$connections" -d3s "$url" >/dev/null # warm-up: connections open, pools filled
        before=$(cpu_ns "$service_pid")
        wrk -t2 -c"$connections" -d"${DURATION}s" --latency "$url" >"$work/wrk.txt"
        after=$(cpu_ns "$service_pid")
        kill "$service_pid"
        wait "$service_pid" 2>/dev/null || true
        service_pid=""
        requests=$(grep -oE '^ *[0-9]+ requests in' "$work/wrk.txt" | grep -oE '[0-9]+')
        rate=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")
        p50=$(awk '$1 == "50%" {print $2}' "$work/wrk.txt")
        p99=$(awk '$1 == "99%" {print $2}' "$work/wrk.txt")
        errors=$(grep -E 'Non-2xx|Socket errors' "$work/wrk.txt" | tr -s ' ' | tr '\n' ' ' || true)
        [[ -n "$errors" ]] && echo "service-table: $client c=$connections cap=$cap: $errors" >&2
        to_ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) printf "%.2f", v / 1000; else if (v ~ /ms$/) printf "%.2f", v + 0; else printf "%.0f", v * 1000 }'; }
        name=$([[ "$client" == curlew ]] && echo Curlew || echo AsyncHTTPClient)
        echo "| $name | $connections | ${cap/-/unlimited} | ${rate%.*} | $(to_ms "$p50") | $(to_ms "$p99") | $(awk -v n=$((after - before)) -v r="$requests" 'BEGIN { printf "%.0f", n / 1000 / r }') |"
    done
done
