#!/usr/bin/env bash
# Shows why a `Data` kept in a global until exit (a suite's `static let`) is reported by
# LeakSanitizer although nothing leaks: Data keeps its storage pointer with the enum case in the
# pointer's top byte (e.g. 0x4000_7bdb_e75e_0100 for the InlineSlice case), so LeakSanitizer's
# scan for pointers never finds it. An Array with the same bytes in the same global is not
# reported. The tests therefore build such values per use (`static var … { … }`) instead of
# suppressing Data allocations, which would also hide real leaks.
set -uo pipefail
out="${TMPDIR:-/tmp}/curlew-lsan-repro"
mkdir -p "$out"
cat >"$out/main.swift" <<'SWIFT'
import Foundation
let bytes = Data(#"{"total": 2, "pictures": []}"#.utf8)   // 28 bytes: Data's InlineSlice case
let array = Array(#"{"total": 2, "pictures": []}"#.utf8)  // the same bytes in an Array
withUnsafeBytes(of: bytes) { raw in
    print("Data's storage word:", String(raw.load(fromByteOffset: 8, as: UInt64.self), radix: 16), "array count:", array.count)
}
fflush(stdout)  // LeakSanitizer ends the process with _exit: buffered output would be lost
SWIFT
swiftc -sanitize=address -g "$out/main.swift" -o "$out/repro" 2>&1 | grep -v 'Cannot export local symbol' || true
ASAN_OPTIONS=detect_leaks=1 "$out/repro" >"$out/repro.log" 2>&1
grep 'storage word' "$out/repro.log"
echo "LeakSanitizer: $(grep -cE '^(Direct|Indirect) leak' "$out/repro.log") report(s), $(grep -c 'FoundationEssentials4DataV' "$out/repro.log") frame(s) in Data.init, $(grep -c 'ArrayBuffer' "$out/repro.log") in Array"
