#!/usr/bin/env bash
# Builds the documentation of every library product as one combined DocC archive and fails on any
# DocC warning (an unresolved symbol link, a missing article), so links between the modules
# (Curlew to CurlewCore, CurlewFleet to Curlew …) cannot rot unnoticed.
#
#   bash scripts/docs.sh          # the archive: .build/plugins/Swift-DocC/outputs/
#
# A module's documentation links into its dependencies only (``/CurlewCore/CurlewError`` from
# Curlew); a type of a module that depends on it is named in code voice.
set -euo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
targets=(Curlew CurlewCore CurlewResilience CurlewDecoding CurlewFleet CurlewOpenAPI CurlewTesting)
args=()
for target in "${targets[@]}"; do args+=(--target "$target"); done
if ! swift package --disable-sandbox generate-documentation "${args[@]}" --enable-experimental-combined-documentation >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "docs.sh: the documentation did not build" >&2
    exit 1
fi
# The package manager's notice about a dependency's unhandled files is not DocC's.
if grep -A8 '^warning:' "$log" | grep -v "swift-distributed-tracing\|CMakeLists.txt" | grep -q '^warning:'; then
    grep -A8 '^warning:' "$log" | grep -v "swift-distributed-tracing" >&2
    echo "docs.sh: DocC warnings (above)" >&2
    exit 1
fi
echo "docs.sh: the documentation of ${targets[*]} built without warnings"
