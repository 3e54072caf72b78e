#!/usr/bin/env bash
# Runs Curlew's whole test suite (swift-testing) after installing what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
swift build --build-tests "$@"
swift test --skip-build "$@"
