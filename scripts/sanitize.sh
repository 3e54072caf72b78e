#!/usr/bin/env bash
# Builds and runs Curlew's whole test suite under a sanitizer, with its own scratch path:
#
#   bash scripts/sanitize.sh address    AddressSanitizer + LeakSanitizer  (.build-asan)
#   bash scripts/sanitize.sh thread     ThreadSanitizer                   (.build-tsan)
#
# Fails when a test fails or when the sanitizer reports anything that is not in
# scripts/sanitizers/{asan,lsan,tsan}.supp (each entry there says why it is not Curlew's).
# ThreadSanitizer builds define CURLEW_TSAN, which routes every `Mutex` of Curlew, CurlewTesting,
# the loopback server and the tests through TSanMutex (Sources/SanitizerSupport), so TSan sees the
# lock hand-over it cannot see in Synchronization.Mutex on Linux
# (scripts/sanitizers/tsan-mutex-repro.sh shows why).
# Extra arguments go to `swift test` (e.g. --filter CacheTests). Servers as in scripts/test.sh
# (httpbin, nginx and the connection servers; tests that need them fail without them).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
mode="${1:-}"
shift || true
case "$mode" in
address)
    scratch="${CURLEW_SANITIZE_SCRATCH:-$root/.build-asan}"
    build_flags=(--sanitize=address)
    export ASAN_OPTIONS="suppressions=$root/scripts/sanitizers/asan.supp:detect_leaks=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export LSAN_OPTIONS="suppressions=$root/scripts/sanitizers/lsan.supp:print_suppressions=1${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    ;;
thread)
    scratch="${CURLEW_SANITIZE_SCRATCH:-$root/.build-tsan}"
    build_flags=(--sanitize=thread -Xswiftc -DCURLEW_TSAN)
    export TSAN_OPTIONS="suppressions=$root/scripts/sanitizers/tsan.supp:halt_on_error=0:print_suppressions=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    ;;
*)
    echo "usage: scripts/sanitize.sh address|thread [swift test arguments…]" >&2
    exit 2
    ;;
esac

# Sanitized code runs several times slower: at most this many tests run at once (swift-testing's
# default is unbounded), so a test waiting for a server-side effect is not starved by 40 others.
# Without CurlewFleet and postgres-nio (Package.swift): the fleet has no unsafe code of its own,
# and building postgres-nio's TLS stack again under the sanitizer costs minutes of every CI run.
export CURLEW_WITHOUT_FLEET=1

export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${CURLEW_SANITIZE_WIDTH:-4}"

bash scripts/ensure-deps.sh
python3 scripts/readme-examples.py README.md Tests/ReadmeExamples/README.swift
# Built before the servers start: they are needed only by the tests.
swift build --build-tests --scratch-path "$scratch" "${build_flags[@]}"

source scripts/test-servers.sh

log="$scratch/sanitize-$mode.log"
set +e
swift test --skip-build --scratch-path "$scratch" "${build_flags[@]}" "$@" 2>&1 | tee "$log"
tests=${PIPESTATUS[0]}
set -e
reports=$(grep -cE '^(==[0-9]+==)?(ERROR: (AddressSanitizer|LeakSanitizer)|WARNING: ThreadSanitizer)' "$log" || true)
suppressed=$(grep -A100 -E 'Suppressions used:' "$log" | grep -E '^ *[0-9]+ +[0-9]+ ' || true)
[ -n "$suppressed" ] && printf 'suppressed (scripts/sanitizers/*.supp):\n%s\n' "$suppressed"
echo "sanitize $mode: tests exit $tests, $reports unsuppressed sanitizer report(s); log $log"
[ "$tests" -eq 0 ] && [ "$reports" -eq 0 ]
