#!/usr/bin/env bash
# Runs the SearchDemo tour against its embedded demo API after installing what it needs.
# Extra arguments go to the demo, e.g. `bash scripts/demo.sh --base-url http://127.0.0.1:8080`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
swift run SearchDemo "$@"
