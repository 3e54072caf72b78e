#!/usr/bin/env bash
# Runs Curlew's whole test suite (swift-testing) after installing what it needs: the library's
# tests, the README's examples (extracted from README.md, compiled and run) and, unless
# CURLEW_SKIP_SERVER_NAMES=1, the README's examples compiled beside Hummingbird.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
python3 scripts/readme-examples.py README.md Tests/ReadmeExamples/README.swift
swift build --build-tests "$@"
# nginx serves static files with ranges for the download tests (CURLEW_NGINX_URL); stopped by PID.
eval "$(bash scripts/nginx.sh start)"
trap 'bash scripts/nginx.sh stop' EXIT
swift test --skip-build "$@"
if [ "${CURLEW_SKIP_SERVER_NAMES:-0}" != "1" ] && [ -f scripts/check-server-names.sh ]; then
    bash scripts/check-server-names.sh
fi
