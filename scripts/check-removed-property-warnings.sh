#!/usr/bin/env bash
# Checks that an endpoint still declaring a property RequestOptions took over (`queueName`,
# `requiresAuthentication`, `usesAccessories`, `middleware`, `skippedMiddleware`) with its old type
# compiles with a deprecation warning that says where it went — in the type or in a protocol
# extension of its family — and that an endpoint declaring none gets no warning.
# Usage: bash scripts/check-removed-property-warnings.sh [SCRATCH_PATH]   (after `swift build`)
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${1:-.build}"
source scripts/lib/typecheck-probe.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/probe.swift" <<'SWIFT'
import Curlew
struct OldGate: Endpoint {
    typealias Response = String
    var path: String { "private" }
    let requiresAuthentication = true
    var queueName: String? { "images" }
}
struct OldChain: Endpoint {
    typealias Response = String
    var path: String { "chain" }
    var middleware: [any APIMiddleware] { [] }
    var usesAccessories: Bool { false }
}
protocol FamilyAPI: Endpoint {}
extension FamilyAPI { var skippedMiddleware: Set<MiddlewareKind> { [.authorization] } }
struct Member: FamilyAPI { typealias Response = String; var path: String { "m" } }
struct Fine: Endpoint { typealias Response = String; var path: String { "f" } }
struct OldPlainQueue: Endpoint { typealias Response = String; var path: String { "q" }; var queueName: String { "images" } }
SWIFT
output=$(typecheck_probe "$scratch" "$work/probe.swift") || {
    echo "the probe did not compile:" >&2; echo "$output" >&2; exit 1
}
status=0
# line of the conformance: associated type (inferred type): where the property went
for expected in \
    "2:_QueueName:Optional<String>:\`queueName\` was removed: set \`queue\` in \`options\`" \
    "2:_RequiresAuthentication:Bool:\`requiresAuthentication\` and \`usesAccessories\` were removed: set them in \`options\`" \
    "8:_UsesAccessories:Bool:\`requiresAuthentication\` and \`usesAccessories\` were removed: set them in \`options\`" \
    "8:_Middleware:Array<any APIMiddleware>:\`middleware\` was removed: set \`middleware\` in \`options\`" \
    "16:_SkippedMiddleware:Set<MiddlewareKind>:\`skippedMiddleware\` was removed: set \`skippedMiddleware\` in \`options\`" \
    "18:_QueueName:String:\`queueName\` was removed: set \`queue\` in \`options\`"; do
    IFS=: read -r line associated inferred message <<<"$expected"
    if grep -qF "probe.swift:$line:8: warning: conformance of" <<<"$output" \
        && grep -qF "$message" <<<"$output" \
        && grep -qF "note: in associated type 'Self.$associated' (inferred as '$inferred')" <<<"$output"; then
        echo "$associated ($inferred): warned"
    else
        echo "$associated: no warning at line $line saying \"$message\"" >&2; status=1
    fi
done
if grep -q "probe.swift:17:" <<<"$output"; then
    echo "an endpoint declaring none of them was warned about:" >&2; status=1
fi
[ $status -eq 0 ] || echo "$output" >&2
exit $status
