#!/usr/bin/env bash
# Builds and runs one libFuzzer target of Fuzz/ (or all of them, one after another) for SECONDS.
#
#   bash scripts/fuzz.sh TARGET SECONDS [libFuzzer flags…]     e.g. scripts/fuzz.sh FuzzResponseHead 30
#   bash scripts/fuzz.sh all 30                                 every target, 30 s each
#   bash scripts/fuzz.sh FuzzEnvelope 0 -runs=10000000          a fixed number of executions
#   bash scripts/fuzz.sh list                                   the targets
#
# Seeds are read from Fuzz/Corpus/TARGET (in the repository); what the fuzzer learns goes to
# .build-fuzz/corpus/TARGET, crashes to .build-fuzz/artifacts/TARGET/ (the script then fails; a
# crash is reproduced with `.build-fuzz/debug/TARGET <crash file>`). Build:
# `swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -O` in Fuzz/ (its own package).
# Scratch path: CURLEW_FUZZ_SCRATCH (default .build-fuzz at the repository root).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
targets=(FuzzJSONScanner FuzzResponseHead FuzzPercentDecoding FuzzEnvelope FuzzLenientDecoding
    FuzzContentDisposition FuzzMultipart FuzzCacheEntry FuzzFixtureName FuzzContentDecoding)
target="${1:-}"
if [ "$target" = list ]; then printf '%s\n' "${targets[@]}"; exit 0; fi
if [ -z "$target" ] || [ -z "${2:-}" ]; then
    echo "usage: scripts/fuzz.sh TARGET|all|list SECONDS [libFuzzer flags…]" >&2
    exit 2
fi
seconds="$2"
shift 2
scratch="${CURLEW_FUZZ_SCRATCH:-$root/.build-fuzz}"
bash scripts/ensure-deps.sh

if [ "$target" = all ]; then
    run=("${targets[@]}")
else
    if ! printf '%s\n' "${targets[@]}" | grep -qx "$target"; then
        echo "unknown fuzz target $target (scripts/fuzz.sh list)" >&2
        exit 2
    fi
    run=("$target")
fi

# One `--product` at a time (SwiftPM honours only the last one): a build of the whole package
# also links the Curlew package's own executables (SearchDemo…) with libFuzzer's `main`, which
# fails. `-c debug` keeps `@testable import` (and the binaries in $scratch/debug); `-O` makes the
# code under test optimised, as it ships: at -Onone every generic Codable path and every byte
# loop is dozens of calls, and the targets ran 20–4,000 executions a second instead of thousands.
# The build plan is dropped first: Fuzz/ reaches Curlew's sources through the `Fuzz/Curlew`
# symlink, and SwiftPM's incremental build once did not notice a file added behind it (the
# target linked without it); without the plan it re-reads the sources, and recompiles only what
# changed.
rm -f "$scratch/debug.yaml"
for name in "${run[@]}"; do
    (cd Fuzz && swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -O --scratch-path "$scratch" --product "$name")
done

# AddressSanitizer: a small quarantine (8 MB instead of 256 MB: peak RSS ~100 MB instead of
# ~540 MB, and freed memory is reused while it is still in cache instead of faulting in fresh
# pages) and no allocation stack traces (a crash is reproduced with full traces by running the
# binary on the artifact with ASAN_OPTIONS unset). Set ASAN_OPTIONS to override.
export ASAN_OPTIONS="${ASAN_OPTIONS:-malloc_context_size=0:quarantine_size_mb=8}"
# A failed check crashes through Swift's backtracer, which trips ASan (a spurious
# "stack-buffer-underflow" report) and has hung once symbolising; libFuzzer's own report suffices.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"

status=0
for name in "${run[@]}"; do
    corpus="$scratch/corpus/$name"
    artifacts="$scratch/artifacts/$name"
    mkdir -p "$corpus" "$artifacts"
    echo "== $name: ${seconds}s $*" >&2
    start=$(date +%s)
    if [ ! -x "$scratch/debug/$name" ]; then
        echo "!! $name was not built ($scratch/debug/$name)" >&2
        status=1
        continue
    fi
    if ! "$scratch/debug/$name" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$artifacts/" \
        -timeout=10 -rss_limit_mb=2048 "$@" "$corpus" "Fuzz/Corpus/$name"; then
        echo "!! $name found a crash: $(ls "$artifacts")" >&2
        status=1
    fi
    echo "== $name: $(( $(date +%s) - start ))s" >&2
done
exit $status
