#!/usr/bin/env bash
# Runs Curlew's whole test suite (swift-testing) after installing what it needs: the library's
# tests, the README's examples (extracted from README.md, compiled and run), unless
# CURLEW_SKIP_SERVER_NAMES=1 the README's examples compiled beside Hummingbird, and unless
# CURLEW_SKIP_FANOUT=1 the sample service's graceful-shutdown check (Samples/FanOutService).
# Real servers on 127.0.0.1, started here and stopped by PID on exit: httpbin (HTTP caching
# tests, CURLEW_HTTPBIN_URL), nginx (static files and ranges, CURLEW_NGINX_URL) and the connection
# servers (nginx with TLS and HTTP/2, tinyproxy, microsocks; CURLEW_NGINX_TLS_URL and friends, see
# scripts/connection-servers.sh). Tests that need them fail, not skip, without them. Then the
# documentation of every library product is built as one DocC archive, and any DocC warning (an
# unresolved link) fails the run (scripts/docs.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
# Style without review: swift-format against .swift-format (`bash scripts/lint.sh --fix` rewrites).
bash scripts/lint.sh
python3 scripts/readme-examples.py README.md Tests/ReadmeExamples/README.swift

source scripts/test-servers.sh

swift build --build-tests "$@"
swift test --skip-build "$@"
if [ "${CURLEW_SKIP_SERVER_NAMES:-0}" != "1" ] && [ -f scripts/check-server-names.sh ]; then
    bash scripts/check-server-names.sh
fi
# The Hummingbird sample service (built as a target of Integration/ServerNames, see the script):
# SIGTERM mid-request, the request still finishes. CURLEW_SKIP_FANOUT=1 skips it.
if [ "${CURLEW_SKIP_FANOUT:-0}" != "1" ] && [ -f scripts/check-fanout-service.sh ]; then
    bash scripts/check-fanout-service.sh
fi
bash scripts/docs.sh
