# Sourced by scripts/test.sh and scripts/sanitize.sh (not run on its own): starts the real servers
# the tests talk to on 127.0.0.1 — httpbin (CURLEW_HTTPBIN_URL), nginx with static files and
# ranges (CURLEW_NGINX_URL) and the connection servers (nginx with TLS and HTTP/2, tinyproxy,
# microsocks; scripts/connection-servers.sh) and PostgreSQL for CurlewFleet (CURLEW_POSTGRES_URL,
# its own data directory in .postgres-test/; scripts/postgres.sh) — exports their URLs, and stops
# them when the sourcing script exits.
CURLEW_HTTPBIN_PID=""
NGINX_STARTED=0
CONNECTION_SERVERS_STARTED=0
POSTGRES_STARTED=0
stop_test_servers() {
    [ "$POSTGRES_STARTED" = 1 ] && bash scripts/postgres.sh stop || true
    [ -n "$CURLEW_HTTPBIN_PID" ] && bash scripts/httpbin.sh stop "$CURLEW_HTTPBIN_PID" || true
    [ "$NGINX_STARTED" = 1 ] && bash scripts/nginx.sh stop || true
    [ "$CONNECTION_SERVERS_STARTED" = 1 ] && bash scripts/connection-servers.sh stop || true
}
trap stop_test_servers EXIT
eval "$(bash scripts/httpbin.sh start)"
eval "$(bash scripts/nginx.sh start)"
NGINX_STARTED=1
CONNECTION_SERVERS_STARTED=1
eval "$(bash scripts/connection-servers.sh start)"
POSTGRES_STARTED=1
eval "$(bash scripts/postgres.sh start)"
