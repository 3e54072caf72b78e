# Sourced by the compile-time diagnostic checks (check-wrapper-diagnostics.sh,
# check-removed-property-warnings.sh): type-checks a Swift file that imports Curlew against the
# module a `swift build` left under a scratch path.

# typecheck_probe SCRATCH FILE — prints the compiler's output; its status is the compiler's.
typecheck_probe() {
    local scratch="$1" file="$2" triple_dir tsan_map
    triple_dir=$(dirname "$(find "$scratch" -path '*debug/CCurlShim.build/module.modulemap' | head -n 1)")
    [ -d "$triple_dir" ] || { echo "build first: no CCurlShim module map under $scratch" >&2; return 2; }
    # A ThreadSanitizer build (scripts/sanitize.sh thread) also has Curlew import CTSanHooks.
    local extra=()
    tsan_map="$(dirname "$triple_dir")/CTSanHooks.build/module.modulemap"
    [ -f "$tsan_map" ] && extra=(-Xcc -fmodule-map-file="$tsan_map" -Xcc -ISources/CTSanHooks/include)
    swiftc -typecheck -I "$scratch/debug/Modules" \
        -Xcc -fmodule-map-file="$triple_dir/module.modulemap" -Xcc -fmodule-map-file=Sources/CCurl/module.modulemap \
        -Xcc -ISources/CCurlShim/include ${extra[@]+"${extra[@]}"} "$file" 2>&1
}
