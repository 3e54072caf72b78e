#!/usr/bin/env bash
# Builds and runs tsan-mutex-repro.swift three ways under ThreadSanitizer and prints how many
# data races each reports (see the comment at the top of the Swift file).
set -uo pipefail
cd "$(dirname "$0")"
out="${TMPDIR:-/tmp}/curlew-tsan-repro"
mkdir -p "$out"
for variant in plain pthread annotated; do
    flags=()
    [ "$variant" = pthread ] && flags=(-D PTHREAD)
    [ "$variant" = annotated ] && flags=(-D ANNOTATED)
    swiftc -sanitize=thread -Onone "${flags[@]}" tsan-mutex-repro.swift -o "$out/$variant" 2>&1 | grep -v '^$' || true
    log="$out/$variant.log"
    TSAN_OPTIONS="halt_on_error=0" "$out/$variant" >"$log" 2>&1
    races=$(grep -c 'WARNING: ThreadSanitizer' "$log")
    echo "$variant: $(grep '^total' "$log") — ThreadSanitizer reports: $races"
done
