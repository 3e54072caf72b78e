#!/usr/bin/env bash
# Checks that a renamed parameter wrapper without a default (`@Header("X-Note") var note: String`)
# fails to compile with the message that says what to write, for @Header, @Query, @Field and @Path.
# Usage: bash scripts/check-wrapper-diagnostics.sh [SCRATCH_PATH]   (after `swift build`)
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${1:-.build}"
triple_dir=$(dirname "$(find "$scratch" -path '*debug/CCurlShim.build/module.modulemap' | head -n 1)")
[ -d "$triple_dir" ] || { echo "build first: no CCurlShim module map under $scratch" >&2; exit 2; }
# A ThreadSanitizer build (scripts/sanitize.sh thread) also has Curlew import CTSanHooks.
extra=()
tsan_map="$(dirname "$triple_dir")/CTSanHooks.build/module.modulemap"
[ -f "$tsan_map" ] && extra=(-Xcc -fmodule-map-file="$tsan_map" -Xcc -ISources/CTSanHooks/include)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for wrapper in Header Query Field Path; do
    printf 'import Curlew\nstruct Probe: Endpoint {\n    typealias Response = String\n    @%s("x-name") var note: String\n    var path: String { "{note}" }\n}\n' "$wrapper" > "$work/probe.swift"
    if output=$(swiftc -typecheck -I "$scratch/debug/Modules" \
        -Xcc -fmodule-map-file="$triple_dir/module.modulemap" -Xcc -fmodule-map-file=Sources/CCurl/module.modulemap \
        -Xcc -ISources/CCurlShim/include ${extra[@]+"${extra[@]}"} "$work/probe.swift" 2>&1); then
        echo "@$wrapper: compiled, expected an error" >&2; status=1
    elif grep -q "a renamed @$wrapper without a default cannot work in Swift; write \`@$wrapper var note: String\` plus \`static let parameterNames" <<<"$output"; then
        echo "@$wrapper: the error says what to write"
    else
        echo "@$wrapper: unexpected error:" >&2; echo "$output" >&2; status=1
    fi
done
exit $status
