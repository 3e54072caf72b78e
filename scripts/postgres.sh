#!/usr/bin/env bash
# Starts or stops a PostgreSQL for the CurlewFleet tests and benchmarks: its own data directory in
# .postgres-test/ (created with initdb on first use), 127.0.0.1 and a free port, trust
# authentication for local connections only. PostgreSQL refuses to run as root: when this runs
# as root, the server runs as the `postgres` user the Debian package creates.
#
#   eval "$(bash scripts/postgres.sh start)"   # exports CURLEW_POSTGRES_URL and CURLEW_POSTGRES_PORT
#   bash scripts/postgres.sh stop              # stops it (pg_ctl stop -m fast)
#   bash scripts/postgres.sh down              # stops it at once (an outage; the fleet tests use it)
#   bash scripts/postgres.sh up                # starts it again on the same port
#
# CURLEW_POSTGRES_NAME=outage bash scripts/postgres.sh start|stop|down|up: a second, private server
# of its own (data in .postgres-test-outage/), which a test may stop without disturbing the others.
set -euo pipefail
cd "$(dirname "$0")/.."
SUFFIX="${CURLEW_POSTGRES_NAME:+-$CURLEW_POSTGRES_NAME}"
DIR="$PWD/.postgres-test$SUFFIX"
mkdir -p "$DIR"
if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$DIR" 2>/dev/null || true
    # A clone under a directory the postgres user cannot enter keeps its data under /tmp instead.
    if ! runuser -u postgres -- test -w "$DIR" 2>/dev/null; then
        DIR="/tmp/curlew-postgres-$(echo "$PWD" | md5sum | cut -c1-12)$SUFFIX"
        mkdir -p "$DIR" && chown postgres: "$DIR"
    fi
fi
DATA="$DIR/data"

find_bin() {
    local found
    found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
    echo "$found"
}
BIN="$(find_bin)"
if [ -z "$BIN" ] || [ ! -x "$BIN/postgres" ]; then
    echo "postgres.sh: installing postgresql" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq postgresql >&2 || { apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2; }
    BIN="$(find_bin)"
fi

as_server_user() {
    if [ "$(id -u)" -eq 0 ]; then
        # From the data's own directory: the server user may not be able to enter the clone's.
        (cd "$DIR" && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

case "${1:-}" in
start)
    if [ ! -f "$DATA/PG_VERSION" ]; then
        as_server_user "$BIN/initdb" -D "$DATA" -U curlew --auth=trust -E UTF8 --no-locale >"$DIR/initdb.log" 2>&1 \
            || { cat "$DIR/initdb.log" >&2; exit 1; }
    fi
    if [ -f "$DATA/postmaster.pid" ]; then
        as_server_user "$BIN/pg_ctl" -D "$DATA" stop -m immediate >/dev/null 2>&1 || true
        rm -f "$DATA/postmaster.pid"
    fi
    PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
    as_server_user "$BIN/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w -t 30 start \
        -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories='$DIR' -c max_connections=200 -c fsync=off" >&2
    echo "$PORT" >"$DIR/port"
    echo "export CURLEW_POSTGRES_URL=postgres://curlew@127.0.0.1:$PORT/postgres CURLEW_POSTGRES_PORT=$PORT"
    ;;
stop)
    if [ -f "$DATA/postmaster.pid" ]; then
        as_server_user "$BIN/pg_ctl" -D "$DATA" stop -m fast >/dev/null 2>&1 || true
    fi
    ;;
down)
    as_server_user "$BIN/pg_ctl" -D "$DATA" stop -m immediate >/dev/null 2>&1 || true
    ;;
up)
    PORT="$(cat "$DIR/port")"
    as_server_user "$BIN/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w -t 30 start \
        -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories='$DIR' -c max_connections=200 -c fsync=off" >/dev/null
    ;;
*)
    echo "usage: postgres.sh start|stop|down|up" >&2
    exit 2
    ;;
esac
