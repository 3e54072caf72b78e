#!/usr/bin/env bash
# Starts or stops an nginx for the tests: static files (with ETag, Last-Modified and ranges) from
# .nginx-test/www on 127.0.0.1 and a free port, its own config, pid, logs and temp dirs.
#
#   eval "$(bash scripts/nginx.sh start)"   # exports CURLEW_NGINX_URL and CURLEW_NGINX_ROOT
#   bash scripts/nginx.sh stop              # stops it by its PID
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="$PWD/.nginx-test"

case "${1:-}" in
start)
    if ! command -v nginx >/dev/null 2>&1; then
        echo "nginx.sh: installing nginx" >&2
        apt-get install -y nginx >&2 || { apt-get update >&2 && apt-get install -y nginx >&2; }
    fi
    NGINX="$(command -v nginx)"
    mkdir -p "$DIR"/{logs,client_body,proxy,fastcgi,uwsgi,scgi,www}
    PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
    cat >"$DIR/nginx.conf" <<CONF
daemon on;
worker_processes 1;
pid $DIR/nginx.pid;
error_log $DIR/logs/error.log warn;
events { worker_connections 256; }
http {
    access_log $DIR/logs/access.log;
    client_body_temp_path $DIR/client_body;
    proxy_temp_path $DIR/proxy;
    fastcgi_temp_path $DIR/fastcgi;
    uwsgi_temp_path $DIR/uwsgi;
    scgi_temp_path $DIR/scgi;
    types { application/octet-stream bin; application/json json; }
    server {
        listen 127.0.0.1:$PORT;
        root $DIR/www;
    }
}
CONF
    "$NGINX" -p "$DIR" -e "$DIR/logs/error.log" -c "$DIR/nginx.conf" -t -q
    "$NGINX" -p "$DIR" -e "$DIR/logs/error.log" -c "$DIR/nginx.conf"
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
        sleep 0.1
    done
    echo "export CURLEW_NGINX_URL=http://127.0.0.1:$PORT CURLEW_NGINX_ROOT=$DIR/www"
    ;;
stop)
    if [[ -f "$DIR/nginx.pid" ]]; then
        kill "$(cat "$DIR/nginx.pid")" 2>/dev/null || true
        rm -f "$DIR/nginx.pid"
    fi
    ;;
*)
    echo "usage: nginx.sh start|stop" >&2
    exit 2
    ;;
esac
