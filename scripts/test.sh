#!/usr/bin/env bash
# Runs Curlew's whole test suite (swift-testing) after installing what it needs: the library's
# tests, the README's examples (extracted from README.md, compiled and run) and, unless
# CURLEW_SKIP_SERVER_NAMES=1, the README's examples compiled beside Hummingbird.
# httpbin (scripts/httpbin.sh) runs on 127.0.0.1 for the HTTP caching tests and is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
python3 scripts/readme-examples.py README.md Tests/ReadmeExamples/README.swift
# httpbin for the HTTP caching tests (they fail, not skip, without CURLEW_HTTPBIN_URL).
eval "$(bash scripts/httpbin.sh start)"
trap 'bash scripts/httpbin.sh stop "$CURLEW_HTTPBIN_PID"' EXIT
swift build --build-tests "$@"
swift test --skip-build "$@"
if [ "${CURLEW_SKIP_SERVER_NAMES:-0}" != "1" ] && [ -f scripts/check-server-names.sh ]; then
    bash scripts/check-server-names.sh
fi
