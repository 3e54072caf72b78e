#!/usr/bin/env bash
# Keeps the style without review: swift-format (part of the Swift toolchain, `swift format`)
# checks every Swift source, test and sample against `.swift-format` (four-space indents, lines up
# to 240 columns, the default rules otherwise); `bash scripts/lint.sh --fix` rewrites them.
# Tests/ReadmeExamples/README.swift is generated from README.md and not checked, nor are the
# committed swift-openapi-generator outputs (Tests/CurlewOpenAPITests/Generated,
# Samples/SearchDemo/OpenAPI/Generated).
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Sources Tests/CurlewTests Tests/CurlewDecodingTests Tests/CurlewResilienceTests Tests/CurlewFleetTests Tests/CurlewOpenAPITests/*.swift Tests/TestSupport Tests/ReadmeExamples/ReadmeExamplesTests.swift Samples/FanOutService Samples/SearchDemo/*.swift)
if [ "${1:-}" = "--fix" ]; then
    swift format format --in-place --recursive --parallel "${paths[@]}"
else
    swift format lint --strict --recursive --parallel "${paths[@]}"
fi
