#!/usr/bin/env bash
# Checks that a renamed parameter wrapper without a default (`@Header("X-Note") var note: String`)
# fails to compile with the message that says what to write, for @Header, @Query, @Field and @Path.
# Usage: bash scripts/check-wrapper-diagnostics.sh [SCRATCH_PATH]   (after `swift build`)
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${1:-.build}"
source scripts/lib/typecheck-probe.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for wrapper in Header Query Field Path; do
    printf 'import Curlew\nstruct Probe: Endpoint {\n    typealias Response = String\n    @%s("x-name") var note: String\n    var path: String { "{note}" }\n}\n' "$wrapper" > "$work/probe.swift"
    if output=$(typecheck_probe "$scratch" "$work/probe.swift"); then
        echo "@$wrapper: compiled, expected an error" >&2; status=1
    elif grep -q "a renamed @$wrapper without a default cannot work in Swift; write \`@$wrapper var note: String\` plus \`static let parameterNames" <<<"$output"; then
        echo "@$wrapper: the error says what to write"
    else
        echo "@$wrapper: unexpected error:" >&2; echo "$output" >&2; status=1
    fi
done
exit $status
