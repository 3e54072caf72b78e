#!/usr/bin/env bash
# Benchmarks Curlew against AsyncHTTPClient, URLSession and raw libcurl on a local nginx.
#
#   bash Benchmarks/run.sh                      # 5000 requests per client and concurrency level
#   bash Benchmarks/run.sh --requests 20000     # any CurlewBenchmark argument passes through
#   bash Benchmarks/run.sh --clients curlew-data,curlew-cache-memory,curlew-cache-disk,curlew-revalidate
#   bash Benchmarks/run.sh --clients openapi-curlew,openapi-ahc,openapi-ahc-shared,openapi-urlsession
#                                               # one generated client (Benchmarks/openapi) on
#                                               # CurlewTransport, AsyncHTTPClientTransport (a
#                                               # tuned HTTPClient, HTTPClient.shared) and
#                                               # URLSessionTransport
#   BENCH_HTTPS=1 bash Benchmarks/run.sh        # the HTTPS rows: Curlew, AsyncHTTPClient and raw
#                                               # libcurl at c=16 and 64 over TLS, HTTP/1.1 then
#                                               # HTTP/2 (ALPN), one table each; extra arguments pass
#                                               # through to both runs
#   bash Benchmarks/run.sh --engines 1          # the Curlew clients' engine count (default: one
#                                               # per active processor); also in --instructions
#   bash Benchmarks/run.sh --pin                # the benchmark and the nginx worker on CPU 0
#                                               # (`taskset`): the work, without cross-CPU wake-ups
#   bash Benchmarks/run.sh --instructions       # instructions per request under callgrind, one
#       [--instructions-requests N]             # row per client and level: (Ir(3N) - Ir(N)) / 2N,
#       [--clients ...] [--concurrency 1,16,64] # N = 2000 by default; needs valgrind. The default
#                                               # clients add libcurl-curlew-wire: libcurl sending
#                                               # what Curlew sends, no Swift (the floor)
#
# Timings on a shared or small machine swing with thread placement and other load; instruction
# counts repeat within about 0.3 %. Context switches per request come from
# /proc/self/task/*/status (every thread of the benchmark process).
#   bash Benchmarks/run.sh --peers              # opt-in (or BENCH_PEERS=1): also Go's net/http and
#                                               # Rust's reqwest (Benchmarks/peers/, built with
#                                               # peers/build.sh from Debian packages), rows added to
#                                               # the same table; works with --instructions and
#                                               # BENCH_HTTPS=1 too
#   bash Benchmarks/run.sh --chart chart.svg    # the timing table, then the instruction table
#       [--clients ...] [--concurrency 1,64]    # (callgrind) of the same clients and levels, then
#                                               # both drawn as one SVG by tools/chart.py (the
#                                               # chart BENCHMARKS.md shows); tables printed too,
#                                               # the numbers drawn kept beside it (chart.csv;
#                                               # tools/chart.py --csv redraws from them)
#   BENCH_NGINX_ONLY=1 bash Benchmarks/run.sh   # start nginx and leave it running (no build, no
#                                               # benchmark); stop it with
#                                               # kill -QUIT "$(cat Benchmarks/.nginx/nginx.pid)"
#
# nginx runs from Benchmarks/.nginx/ (config, pid, logs, temp dirs) on 127.0.0.1:$BENCH_PORT
# and is stopped when the script exits.
set -euo pipefail

MODE=timing
PIN=0
IPR_REQUESTS=2000
IPR_CLIENTS="curlew-data,curlew-decoded,curlew-queue,curlew-middleware,async-http-client,urlsession,libcurl,libcurl-curlew-wire"
IPR_LEVELS="1,16,64"
PASS=()
CHART="" # --chart FILE: the SVG to draw
PEERS="${BENCH_PEERS:-0}" # --peers: the peer clients of Benchmarks/peers/ (see the block below)
ENGINES=()
while (($#)); do
    case "$1" in
        --engines) ENGINES=(--engines "$2"); PASS+=("$1" "$2"); shift ;;
        --instructions) MODE=instructions ;;
        --chart) MODE=chart; CHART="$2"; shift ;;
        --instructions-requests) IPR_REQUESTS="$2"; shift ;;
        --pin) PIN=1 ;;
        --peers) PEERS=1 ;;
        --clients) IPR_CLIENTS="$2"; PASS+=("$1" "$2"); shift ;;
        --concurrency|-c) IPR_LEVELS="$2"; PASS+=("$1" "$2"); shift ;;
        *) PASS+=("$1") ;;
    esac
    shift
done

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(dirname "$BENCH_DIR")"
NGINX_DIR="$BENCH_DIR/.nginx"
PORT="${BENCH_PORT:-18089}"
TLS_PORT="${BENCH_TLS_PORT:-18443}"

# The ~200-byte document served at /small.json. CurlewBenchmark's SmallRecord decodes it,
# and every response must have exactly its length. No single quotes: nginx quotes it with them.
BODY='{"id":42,"name":"curlew","tags":["bird","wader","numenius","arquata"],"active":true,"score":98.625,"owner":{"id":7,"login":"benchmark"},"created":"2026-01-01T00:00:00Z","description":"a fixed JSON body for client benchmarks"}'
BODY_BYTES=$(printf '%s' "$BODY" | wc -c)

if ! command -v nginx >/dev/null 2>&1; then
    echo "run.sh: installing nginx" >&2
    if ! apt-get install -y nginx >&2; then
        apt-get update >&2
        apt-get install -y nginx >&2
    fi
fi
NGINX="$(command -v nginx)"

if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    echo "run.sh: port $PORT is already in use; set BENCH_PORT to a free port" >&2
    exit 1
fi

mkdir -p "$NGINX_DIR"/{logs,client_body,proxy,fastcgi,uwsgi,scgi,static}
# The same document as a static file, for curlew-revalidate: nginx sends ETag and Last-Modified
# for files and answers If-None-Match with 304 (it sends neither for `return`).
printf '%s' "$BODY" >"$NGINX_DIR/static/small.json"
# 64 MiB of random bytes for the transfer benchmark (`CurlewBenchmark transfer`), made once.
if [[ "$(stat -c %s "$NGINX_DIR/static/64m.bin" 2>/dev/null || echo 0)" != 67108864 ]]; then
    head -c 67108864 /dev/urandom >"$NGINX_DIR/static/64m.bin"
fi
# A CA and a certificate for 127.0.0.1 (two days), made once, for the TLS listener.
TLS_DIR="$NGINX_DIR/tls"
if [[ ! -f "$TLS_DIR/server.pem" ]] || ! openssl x509 -checkend 3600 -noout -in "$TLS_DIR/server.pem" >/dev/null 2>&1; then
    mkdir -p "$TLS_DIR"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -sha256 \
        -keyout "$TLS_DIR/ca.key" -out "$TLS_DIR/ca.pem" -subj "/CN=Curlew Benchmark CA" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$TLS_DIR/server.key" -out "$TLS_DIR/server.csr" -subj "/CN=127.0.0.1" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$TLS_DIR/server.ext"
    openssl x509 -req -in "$TLS_DIR/server.csr" -CA "$TLS_DIR/ca.pem" -CAkey "$TLS_DIR/ca.key" -CAcreateserial \
        -days 2 -sha256 -extfile "$TLS_DIR/server.ext" -out "$TLS_DIR/server.pem" 2>/dev/null
fi
if (exec 3<>"/dev/tcp/127.0.0.1/$TLS_PORT") 2>/dev/null; then
    echo "run.sh: port $TLS_PORT is already in use; set BENCH_TLS_PORT to a free port" >&2
    exit 1
fi
cat >"$NGINX_DIR/nginx.conf" <<CONF
daemon on;
worker_processes 1;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/logs/error.log warn;

events {
    worker_connections 1024;
}

http {
    access_log off;
    client_body_temp_path $NGINX_DIR/client_body;
    proxy_temp_path $NGINX_DIR/proxy;
    fastcgi_temp_path $NGINX_DIR/fastcgi;
    uwsgi_temp_path $NGINX_DIR/uwsgi;
    scgi_temp_path $NGINX_DIR/scgi;

    # nginx closes a keep-alive connection after 1000 requests by default, which would
    # show up as extra connections; keep them open for the whole run instead.
    keepalive_requests 1000000;
    keepalive_timeout 120s;

    server {
        listen 127.0.0.1:$PORT;
        server_name localhost;

        location = /small.json {
            default_type application/json;
            return 200 '$BODY';
        }

        location = /nginx_status {
            stub_status;
        }

        location /static/ {
            alias $NGINX_DIR/static/;
            default_type application/json;
        }

        location = /static/64m.bin {
            alias $NGINX_DIR/static/64m.bin;
            default_type application/octet-stream;
        }

        # Upload sink for the transfer benchmark: nginx reads and discards the body of up to
        # 100 MiB and answers 204 (libcurl keeps sending after an early 2xx).
        location = /upload {
            client_max_body_size 100m;
            return 204;
        }
    }

    # The HTTPS rows: the same document over TLS, HTTP/2 offered by ALPN (up to 128 streams per
    # connection, nginx's default).
    server {
        listen 127.0.0.1:$TLS_PORT ssl http2;
        server_name localhost;
        ssl_certificate $TLS_DIR/server.pem;
        ssl_certificate_key $TLS_DIR/server.key;

        location = /small.json {
            default_type application/json;
            return 200 '$BODY';
        }
    }
}
CONF

stop_nginx() {
    if [[ -f "$NGINX_DIR/nginx.pid" ]]; then
        "$NGINX" -p "$NGINX_DIR" -e "$NGINX_DIR/logs/error.log" -c "$NGINX_DIR/nginx.conf" -s quit 2>/dev/null || true
    fi
}
[[ "${BENCH_NGINX_ONLY:-}" == 1 ]] || trap stop_nginx EXIT

"$NGINX" -p "$NGINX_DIR" -e "$NGINX_DIR/logs/error.log" -c "$NGINX_DIR/nginx.conf" -t -q
"$NGINX" -p "$NGINX_DIR" -e "$NGINX_DIR/logs/error.log" -c "$NGINX_DIR/nginx.conf"
for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
done
if [[ "${BENCH_NGINX_ONLY:-}" == 1 ]]; then
    echo "run.sh: nginx master PID $(cat "$NGINX_DIR/nginx.pid") on 127.0.0.1:$PORT, left running" >&2
    exit 0
fi

cd "$REPO_DIR"
# A stale build plan once kept files moved between modules as missing inputs: drop it first.
rm -f "$BENCH_DIR/.build/release.yaml"
swift build -c release --package-path Benchmarks >&2
BIN_DIR="$(swift build -c release --package-path Benchmarks --show-bin-path)"

# --- peers (opt-in: --peers or BENCH_PEERS=1) ---------------------------------------------------
# Go's net/http and Rust's reqwest, Benchmarks/peers/, driven with the same load (requests,
# warm-up, rounds and concurrency levels of this run) against the same nginx; their rows are
# added to the Swift benchmark's table. Nothing here runs without the flag.
PEER_ARGS=()
if [[ "$PEERS" == 1 ]]; then
    bash "$BENCH_DIR/peers/build.sh"
    for ((i = 0; i < ${#PASS[@]}; i++)); do
        case "${PASS[i]}" in
            --requests|-n|--warmup|--rounds) PEER_ARGS+=("${PASS[i]}" "${PASS[i + 1]:-}"); i=$((i + 1)) ;;
        esac
    done
fi
# Prints the Swift report $1 with the peer rows of file $2 appended to its first table.
peers_merge() {
    awk -v rows="$2" '
        !done && intable && !/^\|/ { while ((getline line < rows) > 0) print line; done = 1 }
        /^\|/ { intable = 1 }
        { print }
        END { if (!done) while ((getline line < rows) > 0) print line }' "$1"
}
# --- end peers -----------------------------------------------------------------------------------
COMMON=(--url "http://127.0.0.1:$PORT/small.json" --status-url "http://127.0.0.1:$PORT/nginx_status" --expected-bytes "$BODY_BYTES")

if [[ "$MODE" == instructions || "$MODE" == chart ]]; then
    command -v valgrind >/dev/null || { echo "run.sh: --instructions needs valgrind (apt-get install valgrind)" >&2; exit 2; }
    work="$(mktemp -d)"
    trap 'rm -rf "$work"; stop_nginx' EXIT
    # valgrind 3.19 cannot read Swift's DWARF 5 (profile a copy without debug info) and crashes
    # on libdispatch's read-only sigsuspend mask (the shim copies it to the stack).
    cc -shared -fPIC -O2 -o "$work/shim.so" "$BENCH_DIR/tools/sigsuspend_shim.c"
    objcopy --strip-debug "$BIN_DIR/CurlewBenchmark" "$work/bench"
    collected() {
        local requests=$1 client=$2 level=$3
        LD_PRELOAD="$work/shim.so" valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
            "$work/bench" "${COMMON[@]}" --warmup 200 --rounds 1 --clients "$client" --concurrency "$level" \
            --requests "$requests" "${ENGINES[@]}" >"$work/log" 2>&1 || { tail -20 "$work/log" >&2; return 1; }
        grep -oE 'Collected : [0-9]+' "$work/log" | grep -oE '[0-9]+'
    }
    instruction_table() {
        echo "## Instructions per request (callgrind: (Ir($((3 * IPR_REQUESTS))) - Ir($IPR_REQUESTS)) / $((2 * IPR_REQUESTS)), 200 warm-up)"
        echo ""
        echo "| client | c | instructions/request |"
        echo "|---|---:|---:|"
        IFS=, read -ra clients <<<"$IPR_CLIENTS"
        IFS=, read -ra levels <<<"$IPR_LEVELS"
        for level in "${levels[@]}"; do
            for client in "${clients[@]}"; do
                echo "run.sh: callgrind $client c=$level" >&2
                small=$(collected "$IPR_REQUESTS" "$client" "$level")
                large=$(collected $((3 * IPR_REQUESTS)) "$client" "$level")
                echo "| $client | $level | $(( (large - small) / (2 * IPR_REQUESTS) )) |"
            done
        done
    }
    if [[ "$MODE" == chart ]]; then
        # The same clients and levels timed, then counted; both tables printed and drawn.
        "$BIN_DIR/CurlewBenchmark" "${COMMON[@]}" --clients "$IPR_CLIENTS" --concurrency "$IPR_LEVELS" \
            "${PASS[@]}" | tee "$work/timing.md"
        echo ""
        instruction_table | tee "$work/instructions.md"
        python3 "$BENCH_DIR/tools/chart.py" --timing "$work/timing.md" --instructions "$work/instructions.md" \
            --out "$CHART" --caption "$(date -u +%Y-%m-%d) $(git -C "$REPO_DIR" rev-parse --short HEAD), $(nproc) CPUs"
        echo "run.sh: chart written to $CHART" >&2
        exit 0
    fi
    instruction_table
    # --- peers (opt-in) ---
    if [[ "$PEERS" == 1 ]]; then
        bash "$BENCH_DIR/peers/run.sh" "$PORT" --instructions "$IPR_REQUESTS" --concurrency "$IPR_LEVELS" \
            --warmup 200 --no-header
    fi
    # --- end peers ---
    exit 0
fi

if [[ "${BENCH_HTTPS:-}" == 1 ]]; then
    for version in 1.1 2; do
        echo "## HTTPS, HTTP/$version"
        echo ""
        swift_status=0
        "$BIN_DIR/CurlewBenchmark" \
            --url "https://127.0.0.1:$TLS_PORT/small.json" \
            --status-url "http://127.0.0.1:$PORT/nginx_status" \
            --expected-bytes "$BODY_BYTES" \
            --ca-file "$TLS_DIR/ca.pem" --http-version "$version" \
            --clients curlew-data,async-http-client,libcurl --concurrency 16,64 \
            "${PASS[@]}" >"$NGINX_DIR/swift-report.md" || swift_status=$?
        # --- peers (opt-in): their rows join the table ---
        if [[ "$PEERS" == 1 ]]; then
            bash "$BENCH_DIR/peers/run.sh" "$PORT" --no-header --url "https://127.0.0.1:$TLS_PORT/small.json" \
                --ca-file "$TLS_DIR/ca.pem" --http-version "$version" --concurrency 16,64 \
                "${PEER_ARGS[@]}" >"$NGINX_DIR/peer-rows.md" || swift_status=$?
            peers_merge "$NGINX_DIR/swift-report.md" "$NGINX_DIR/peer-rows.md"
        else
            cat "$NGINX_DIR/swift-report.md"
        fi
        # --- end peers ---
        echo ""
        ((swift_status == 0)) || exit "$swift_status"
    done
    exit 0
fi
PREFIX=()
if [[ "$PIN" == 1 ]]; then
    # The benchmark and nginx's worker share CPU 0: every hand-off is a same-CPU wake-up.
    for worker in $(pgrep -P "$(cat "$NGINX_DIR/nginx.pid")"); do taskset -pc 0 "$worker" >/dev/null; done
    PREFIX=(taskset -c 0)
fi
# --- peers (opt-in) ---
if [[ "$PEERS" == 1 ]]; then
    swift_status=0
    "${PREFIX[@]}" "$BIN_DIR/CurlewBenchmark" "${COMMON[@]}" "${PASS[@]}" >"$NGINX_DIR/swift-report.md" || swift_status=$?
    PEERS_PREFIX="${PREFIX[*]}" bash "$BENCH_DIR/peers/run.sh" "$PORT" --no-header --concurrency "$IPR_LEVELS" \
        "${PEER_ARGS[@]}" >"$NGINX_DIR/peer-rows.md" || swift_status=$?
    peers_merge "$NGINX_DIR/swift-report.md" "$NGINX_DIR/peer-rows.md"
    exit "$swift_status"
fi
# --- end peers ---
"${PREFIX[@]}" "$BIN_DIR/CurlewBenchmark" "${COMMON[@]}" "${PASS[@]}"
