#!/usr/bin/env bash
# Proves that a Hummingbird server can import Curlew: builds and tests Integration/ServerNames, a
# package whose test target compiles the README's Swift examples (with `import Hummingbird` added),
# a name probe (target NameProbe: every public type of Curlew unqualified beside Hummingbird), and a
# hand-written file that uses an APIClient from Hummingbird routes.
#   bash scripts/check-server-names.sh [extra `swift build` / `swift test` arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh

pkg=Integration/ServerNames
tests=$pkg/Tests/ServerNamesTests

# The README's ```swift blocks (a failing one names its README.md line). The fleet's compiles
# only where CurlewFleet can be imported: this package does not link it, which would build
# postgres-nio and its TLS stack once more (Tests/ReadmeExamples in the main package compiles it).
python3 scripts/readme-examples.py README.md "$tests/ReadmeExamples.generated.swift" --extra-import Hummingbird

# Every public type of Curlew, CurlewDecoding, CurlewResilience and CurlewTesting, unqualified (Curlew once had a RequestID, which is also Hummingbird's;
# it is CallID now).
# It is its own target (NameProbe) so that a type the README declares cannot shadow a collision.
probe_file=$pkg/Sources/NameProbe/NameProbe.generated.swift
probe=$(python3 scripts/public-names.py --probe --import Foundation --import HTTPTypes --import Hummingbird \
    Sources/Curlew Sources/CurlewCore Sources/CurlewDecoding Sources/CurlewResilience Sources/CurlewTesting)
if [[ ! -f "$probe_file" || "$(cat "$probe_file")" != "$probe" ]]; then
    printf '%s\n' "$probe" > "$probe_file"
fi

swift build --build-tests --package-path "$pkg" "$@"
swift test --skip-build --package-path "$pkg" "$@"
