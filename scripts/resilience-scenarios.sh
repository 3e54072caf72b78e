#!/usr/bin/env bash
# The issue-scale resilience scenarios (hedging, circuit breaker, adaptive limit) as measured
# runs against the loopback server; BENCHMARKS.md ("Resilience") records their numbers.
#   bash scripts/resilience-scenarios.sh [hedging|breaker|limiter|all] [debug|release]
set -euo pipefail
cd "$(dirname "$0")/.."
configuration="${2:-debug}"
swift build -c "$configuration" --product ResilienceScenarios
"$(swift build -c "$configuration" --show-bin-path)/ResilienceScenarios" "${1:-all}"
