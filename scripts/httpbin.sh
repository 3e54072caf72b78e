#!/usr/bin/env bash
# Starts or stops httpbin (a widely used HTTP test service that no one here wrote) on 127.0.0.1
# for the tests of HTTP caching behaviour (Tests/CurlewTests/Cache/HTTPBinCacheTests.swift).
#
#   eval "$(bash scripts/httpbin.sh start)"   # installs into .venv-httpbin once, starts gunicorn on a
#                                             # free port, waits until it answers, prints
#                                             # `export CURLEW_HTTPBIN_URL=… CURLEW_HTTPBIN_PID=…`
#   bash scripts/httpbin.sh stop "$CURLEW_HTTPBIN_PID"
#
# Versions are pinned to ones that install and run on Python 3.11 (httpbin 0.10.2 works with
# Flask 3.1 / Werkzeug 3.1; gunicorn ≥ 24 knows --no-control-socket).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-httpbin
PINS="httpbin==0.10.2 gunicorn==27.0.1 flask==3.1.3 werkzeug==3.1.9"

start() {
    if [ ! -x "$VENV/bin/gunicorn" ] || [ "$(cat "$VENV/.pins" 2>/dev/null)" != "$PINS" ]; then
        echo "Installing httpbin into $VENV ($PINS)…" >&2
        python3 -m venv "$VENV" >&2
        # shellcheck disable=SC2086
        "$VENV/bin/pip" install -q --disable-pip-version-check $PINS >&2
        echo "$PINS" > "$VENV/.pins"
    fi
    local port pid url
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    "$VENV/bin/gunicorn" --no-control-socket -b "127.0.0.1:$port" -w 2 httpbin:app >"$VENV/gunicorn.log" 2>&1 &
    pid=$!
    url="http://127.0.0.1:$port"
    for _ in $(seq 1 150); do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "httpbin exited; log:" >&2
            cat "$VENV/gunicorn.log" >&2
            exit 1
        fi
        if curl -fsS -o /dev/null "$url/get" 2>/dev/null; then
            echo "export CURLEW_HTTPBIN_URL=$url CURLEW_HTTPBIN_PID=$pid"
            echo "httpbin answers at $url (pid $pid)" >&2
            return 0
        fi
        sleep 0.2
    done
    echo "httpbin did not answer at $url within 30 s" >&2
    kill "$pid" 2>/dev/null || true
    exit 1
}

stop() {
    local pid="${1:-}"
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

case "${1:-}" in
    start) start ;;
    stop) stop "${2:-}" ;;
    *) echo "usage: $0 start | stop PID" >&2; exit 2 ;;
esac
