#!/usr/bin/env bash
# Starts or stops the servers the connection and security tests need, all on 127.0.0.1 and free
# ports, with their own config, pid and log files under .connections-test/:
#
# - a certificate authority, server certificates (good, wrong host name, expired, self-signed) and
#   client certificates, generated here with the `openssl` command (nothing is checked in);
# - nginx with TLS and HTTP/2 (ALPN) for each server certificate, one server that requires a client
#   certificate (`ssl_verify_client on`), and one plain HTTP server that closes idle keep-alive
#   connections after one second (for the CLOSE-WAIT test);
# - tinyproxy (HTTP forward proxy and CONNECT tunnels, basic authentication) and microsocks
#   (SOCKS5 with username and password), each logging the connections it serves.
#
#   eval "$(bash scripts/connection-servers.sh start)"   # exports CURLEW_NGINX_TLS_URL and friends
#   bash scripts/connection-servers.sh stop              # stops them by their PIDs
#
# nginx answers `GET /conn` with "<connection serial> <protocol>" ($connection $server_protocol), so
# a test counts the connections nginx accepted and sees whether HTTP/2 was negotiated. The TLS
# server answers `GET /downgrade/<port>` with a 302 to http://…@127.0.0.1:<port>/landing.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="$PWD/.connections-test"
TLS="$DIR/tls"
PROXY_USER=curlew
PROXY_PASSWORD=s3cret-proxy

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

wait_for_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.05
    done
    echo "connection-servers.sh: nothing listens on port $1" >&2
    return 1
}

install_missing() {
    local missing=()
    command -v nginx >/dev/null 2>&1 || missing+=(nginx)
    command -v openssl >/dev/null 2>&1 || missing+=(openssl)
    command -v tinyproxy >/dev/null 2>&1 || missing+=(tinyproxy)
    command -v microsocks >/dev/null 2>&1 || missing+=(microsocks)
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "connection-servers.sh: installing ${missing[*]}" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq "${missing[@]}" >&2 || { apt-get update -qq >&2 && apt-get install -y -qq "${missing[@]}" >&2; }
    fi
}

# A key (P-256) and a certificate signing request.
key_and_request() { # name subject
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$TLS/$1.key" -out "$TLS/$1.csr" -subj "$2" 2>/dev/null
}

# Signs a request with the test CA for two days, with the given extensions.
sign() { # name extensions
    printf '%s\n' "$2" >"$TLS/$1.ext"
    openssl x509 -req -in "$TLS/$1.csr" -CA "$TLS/ca.pem" -CAkey "$TLS/ca.key" -CAcreateserial \
        -days 2 -sha256 -extfile "$TLS/$1.ext" -out "$TLS/$1.pem" 2>/dev/null
}

# The sha256 pin of a certificate's public key, as CURLOPT_PINNEDPUBLICKEY spells it.
pin_of() { # certificate
    printf 'sha256//%s' "$(openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | openssl base64 -A)"
}

make_certificates() {
    rm -rf "$TLS"
    mkdir -p "$TLS/ca-db/new"
    local server_ext='subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:curlew.test,DNS:*.curlew.test
extendedKeyUsage=serverAuth
basicConstraints=critical,CA:FALSE'
    # The certificate authority the tests trust explicitly.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -sha256 \
        -keyout "$TLS/ca.key" -out "$TLS/ca.pem" -subj "/CN=Curlew Test CA" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    # Good: 127.0.0.1, localhost and *.curlew.test.
    key_and_request good "/CN=127.0.0.1"
    sign good "$server_ext"
    # Wrong host name: valid and signed by the CA, but only for another name.
    key_and_request wrong-host "/CN=elsewhere.example"
    sign wrong-host 'subjectAltName=DNS:elsewhere.example
extendedKeyUsage=serverAuth
basicConstraints=critical,CA:FALSE'
    # Expired: signed by the CA for the right names, valid only on 1-2 January 2020 (`openssl ca`
    # is the command that takes explicit validity dates).
    key_and_request expired "/CN=127.0.0.1"
    printf '%s\n' "$server_ext" >"$TLS/expired.ext"
    : >"$TLS/ca-db/index.txt"
    echo 1000 >"$TLS/ca-db/serial"
    cat >"$TLS/ca-db/ca.cnf" <<CNF
[ ca ]
default_ca = test_ca
[ test_ca ]
database = $TLS/ca-db/index.txt
new_certs_dir = $TLS/ca-db/new
serial = $TLS/ca-db/serial
default_md = sha256
policy = anything
unique_subject = no
[ anything ]
commonName = supplied
CNF
    openssl ca -batch -notext -config "$TLS/ca-db/ca.cnf" -cert "$TLS/ca.pem" -keyfile "$TLS/ca.key" \
        -in "$TLS/expired.csr" -out "$TLS/expired.pem" -extfile "$TLS/expired.ext" \
        -startdate 20200101000000Z -enddate 20200102000000Z </dev/null 2>/dev/null
    # Self-signed, for the right names, signed by nobody the tests trust.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -sha256 \
        -keyout "$TLS/self-signed.key" -out "$TLS/self-signed.pem" -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>/dev/null
    # Client certificates: one from the CA (its key also encrypted with a password), one
    # self-signed that the mutual-TLS server refuses.
    key_and_request client "/CN=curlew-client"
    sign client 'extendedKeyUsage=clientAuth
basicConstraints=critical,CA:FALSE'
    openssl pkey -in "$TLS/client.key" -aes256 -passout pass:client-key-password -out "$TLS/client-encrypted.key"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -sha256 \
        -keyout "$TLS/rogue-client.key" -out "$TLS/rogue-client.pem" -subj "/CN=rogue-client" 2>/dev/null
    pin_of "$TLS/good.pem" >"$TLS/good.pin"
    pin_of "$TLS/self-signed.pem" >"$TLS/self-signed.pin"
    chmod 600 "$TLS"/*.key
}

start_nginx() {
    local nginx
    nginx="$(command -v nginx)"
    mkdir -p "$DIR"/{logs,client_body,proxy,fastcgi,uwsgi,scgi,www}
    head -c 12582912 /dev/urandom >"$DIR/www/12m.bin"
    local common='
        location = /conn { default_type text/plain; return 200 "$connection $server_protocol"; }
        location = /via { default_type text/plain; return 200 "$http_via"; }
        location = /target { default_type text/plain; return 200 "$request_uri $server_protocol"; }
        location = /cookies/echo { default_type text/plain; return 200 "$http_cookie"; }
        location = /cookies/set-secure {
            add_header Set-Cookie "tls_token=t1; Secure; HttpOnly; Path=/";
            default_type text/plain; return 200 "set";
        }
        location = /cookies/set-plain { add_header Set-Cookie "plain=p1; Path=/"; default_type text/plain; return 200 "set"; }
        location / { root '"$DIR"'/www; }'
    cat >"$DIR/nginx.conf" <<CONF
daemon on;
worker_processes 1;
pid $DIR/nginx.pid;
error_log $DIR/logs/error.log warn;
events { worker_connections 1024; }
http {
    log_format conn '\$connection \$server_port \$server_protocol \$request';
    access_log $DIR/logs/access.log conn;
    client_body_temp_path $DIR/client_body;
    proxy_temp_path $DIR/proxy;
    fastcgi_temp_path $DIR/fastcgi;
    uwsgi_temp_path $DIR/uwsgi;
    scgi_temp_path $DIR/scgi;
    types { application/octet-stream bin; application/json json; }
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$PORT_GOOD ssl http2;
        ssl_certificate $TLS/good.pem;
        ssl_certificate_key $TLS/good.key;
        # An https -> http redirect to the plain port in the path, with user-info (a credential
        # the hop must lose).
        location ~ ^/downgrade/([0-9]+)\$ { return 302 http://hop-user:hop-password@127.0.0.1:\$1/landing; }
        $common
    }
    server {
        listen 127.0.0.1:$PORT_WRONG_HOST ssl http2;
        ssl_certificate $TLS/wrong-host.pem;
        ssl_certificate_key $TLS/wrong-host.key;
        $common
    }
    server {
        listen 127.0.0.1:$PORT_EXPIRED ssl http2;
        ssl_certificate $TLS/expired.pem;
        ssl_certificate_key $TLS/expired.key;
        $common
    }
    server {
        listen 127.0.0.1:$PORT_SELF_SIGNED ssl http2;
        ssl_certificate $TLS/self-signed.pem;
        ssl_certificate_key $TLS/self-signed.key;
        $common
    }
    server {
        listen 127.0.0.1:$PORT_MTLS ssl http2;
        ssl_certificate $TLS/good.pem;
        ssl_certificate_key $TLS/good.key;
        ssl_client_certificate $TLS/ca.pem;
        ssl_verify_client on;
        location / { default_type text/plain; return 200 "\$ssl_client_s_dn"; }
    }
    server {
        listen 127.0.0.1:$PORT_PLAIN;
        keepalive_timeout 1s;
        $common
    }
}
CONF
    "$nginx" -p "$DIR" -e "$DIR/logs/error.log" -c "$DIR/nginx.conf" -t -q
    "$nginx" -p "$DIR" -e "$DIR/logs/error.log" -c "$DIR/nginx.conf"
}

start_proxies() {
    cat >"$DIR/tinyproxy.conf" <<CONF
Port $PORT_HTTP_PROXY
Listen 127.0.0.1
Timeout 60
MaxClients 200
LogFile "$DIR/logs/tinyproxy.log"
LogLevel Connect
PidFile "$DIR/tinyproxy.pid"
Allow 127.0.0.1
BasicAuth $PROXY_USER $PROXY_PASSWORD
CONF
    : >"$DIR/logs/tinyproxy.log"
    tinyproxy -d -c "$DIR/tinyproxy.conf" >>"$DIR/logs/tinyproxy.out" 2>&1 &
    echo $! >"$DIR/tinyproxy.pid.own"
    microsocks -i 127.0.0.1 -p "$PORT_SOCKS" -u "$PROXY_USER" -P "$PROXY_PASSWORD" >"$DIR/logs/microsocks.log" 2>&1 &
    echo $! >"$DIR/microsocks.pid"
}

stop_all() {
    [ -f "$DIR/nginx.pid" ] && { kill "$(cat "$DIR/nginx.pid")" 2>/dev/null || true; rm -f "$DIR/nginx.pid"; }
    for pidfile in "$DIR/tinyproxy.pid.own" "$DIR/microsocks.pid"; do
        [ -f "$pidfile" ] && { kill "$(cat "$pidfile")" 2>/dev/null || true; rm -f "$pidfile"; }
    done
    return 0
}

case "${1:-}" in
start)
    install_missing
    stop_all
    mkdir -p "$DIR/logs"
    rm -f "$DIR"/logs/*
    make_certificates
    PORT_GOOD=$(free_port); PORT_WRONG_HOST=$(free_port); PORT_EXPIRED=$(free_port)
    PORT_SELF_SIGNED=$(free_port); PORT_MTLS=$(free_port); PORT_PLAIN=$(free_port)
    PORT_HTTP_PROXY=$(free_port); PORT_SOCKS=$(free_port)
    start_nginx
    start_proxies
    for port in "$PORT_GOOD" "$PORT_PLAIN" "$PORT_MTLS" "$PORT_HTTP_PROXY" "$PORT_SOCKS"; do wait_for_port "$port"; done
    echo "export CURLEW_TLS_DIR=$TLS CURLEW_CONNECTIONS_LOGS=$DIR/logs" \
        "CURLEW_NGINX_TLS_URL=https://127.0.0.1:$PORT_GOOD" \
        "CURLEW_NGINX_TLS_WRONG_HOST_URL=https://127.0.0.1:$PORT_WRONG_HOST" \
        "CURLEW_NGINX_TLS_EXPIRED_URL=https://127.0.0.1:$PORT_EXPIRED" \
        "CURLEW_NGINX_TLS_SELF_SIGNED_URL=https://127.0.0.1:$PORT_SELF_SIGNED" \
        "CURLEW_NGINX_MTLS_URL=https://127.0.0.1:$PORT_MTLS" \
        "CURLEW_NGINX_SHORT_KEEPALIVE_URL=http://127.0.0.1:$PORT_PLAIN" \
        "CURLEW_HTTP_PROXY=127.0.0.1:$PORT_HTTP_PROXY CURLEW_SOCKS_PROXY=127.0.0.1:$PORT_SOCKS" \
        "CURLEW_PROXY_USER=$PROXY_USER CURLEW_PROXY_PASSWORD=$PROXY_PASSWORD"
    ;;
stop)
    stop_all
    ;;
*)
    echo "usage: connection-servers.sh start|stop" >&2
    exit 2
    ;;
esac
