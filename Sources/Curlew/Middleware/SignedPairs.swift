internal import Foundation

/// The `name=value` pairs a signature covers, decoded into one byte buffer, and the canonical
/// `a=1&b=2` text built from them (``SigningMiddleware``'s canonical form).
///
/// The signing middleware builds this on every request and attempt. Pairs are byte ranges of one
/// buffer, not a `String` each; when every pair is ASCII they are sorted by their bytes, which is
/// the order `String`'s `<` gives ASCII text. Any non-ASCII pair sorts all of them as `String`s,
/// exactly as before (canonical equivalence included), so signatures never change.
struct SignedPairs {
    private var storage: [UInt8] = []
    private var pairs: [(name: Range<Int>, value: Range<Int>)] = []
    private var isASCII = true

    init() {
        storage.reserveCapacity(128)
        // Room for the usual handful of pairs: one allocation, not one per doubling.
        pairs.reserveCapacity(8)
    }

    /// Adds the decoded query items of a URL (`+` stays a plus, as Curlew encodes spaces in
    /// queries as `%20`).
    mutating func appendQuery(of url: String) {
        var url = url
        url.withUTF8 { bytes in
            guard let range = QueryString.queryRange(in: bytes) else { return }
            appendPairs(of: UnsafeBufferPointer(rebasing: bytes[range]), plusIsSpace: false)
        }
    }

    /// Adds the decoded fields of an `application/x-www-form-urlencoded` body (`+` is a space).
    mutating func appendForm(_ body: Data) {
        var text = String(decoding: body, as: UTF8.self)
        text.withUTF8 { appendPairs(of: $0, plusIsSpace: true) }
    }

    /// Adds one pair as it is.
    mutating func append(name: String, value: String) {
        let nameRange = append(contentsOf: name)
        pairs.append((nameRange, append(contentsOf: value)))
    }

    /// Drops every pair called `name`.
    mutating func removeAll(named name: String) {
        let name = Array(name.utf8)
        pairs.removeAll { storage[$0.name].elementsEqual(name) }
    }

    /// `a=1&b=2`, sorted by name, then value.
    func canonicalBytes() -> [UInt8] {
        withCanonicalBytes { Array($0) }
    }

    /// Calls `body` with the canonical text, built in stack memory when it is small (the sort
    /// order and the text need no heap array of their own).
    func withCanonicalBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(of: Int.self, capacity: pairs.count) { buffer in
            var order = buffer
            for index in pairs.indices { order.initializeElement(at: index, to: index) }
            if isASCII {
                storage.withUnsafeBufferPointer { bytes in
                    order.sort { left, right in
                        let l = pairs[left]
                        let r = pairs[right]
                        let byName = Self.compare(bytes, l.name, r.name)
                        return byName != 0 ? byName < 0 : Self.compare(bytes, l.value, r.value) < 0
                    }
                }
            } else {
                let text = pairs.map { (name: string(at: $0.name), value: string(at: $0.value)) }
                order.sort { (text[$0].name, text[$0].value) < (text[$1].name, text[$1].value) }
            }
            let length = storage.count + max(0, 2 * pairs.count - 1)
            return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { canonical in
                var position = 0
                storage.withUnsafeBufferPointer { bytes in
                    for (rank, index) in order.enumerated() {
                        if rank > 0 {
                            canonical.initializeElement(at: position, to: UInt8(ascii: "&"))
                            position += 1
                        }
                        position = Self.copy(bytes, pairs[index].name, to: canonical, at: position)
                        canonical.initializeElement(at: position, to: UInt8(ascii: "="))
                        position = Self.copy(bytes, pairs[index].value, to: canonical, at: position + 1)
                    }
                }
                return try body(UnsafeBufferPointer(rebasing: canonical[..<position]))
            }
        }
    }

    private static func copy(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, to out: UnsafeMutableBufferPointer<UInt8>, at position: Int) -> Int {
        position + UnsafeMutableBufferPointer(rebasing: out[position...]).initialize(fromContentsOf: UnsafeBufferPointer(rebasing: bytes[range]))
    }

    private func string(at range: Range<Int>) -> String {
        String(decoding: storage[range], as: UTF8.self)
    }

    private mutating func append(contentsOf text: String) -> Range<Int> {
        let start = storage.count
        var text = text
        text.withUTF8 { bytes in
            storage.append(contentsOf: bytes)
            if isASCII, !bytes.allSatisfy({ $0 < 0x80 }) { isASCII = false }
        }
        return start..<storage.count
    }

    /// Each non-empty `&`-separated part, split at its first `=` (no `=`: an empty value).
    private mutating func appendPairs(of bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) {
        var start = 0
        while start < bytes.count {
            let rest = UnsafeBufferPointer(rebasing: bytes[start...])
            let end = start + (rest.firstIndex(ofByte: UInt8(ascii: "&")) ?? rest.count)
            if end > start {
                let part = UnsafeBufferPointer(rebasing: bytes[start..<end])
                if let equals = part.firstIndex(ofByte: UInt8(ascii: "=")) {
                    let name = appendDecoded(UnsafeBufferPointer(rebasing: part[..<equals]), plusIsSpace: plusIsSpace)
                    pairs.append((name, appendDecoded(UnsafeBufferPointer(rebasing: part[(equals + 1)...]), plusIsSpace: plusIsSpace)))
                } else {
                    let name = appendDecoded(part, plusIsSpace: plusIsSpace)
                    pairs.append((name, storage.count..<storage.count))
                }
            }
            start = end + 1
        }
    }

    /// Appends the decoded bytes (``QueryString/appendDecoded(_:plusIsSpace:to:)``).
    private mutating func appendDecoded(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> Range<Int> {
        let start = storage.count
        let needsWork = bytes.contains { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }
        if needsWork {
            QueryString.appendDecoded(bytes, plusIsSpace: plusIsSpace, to: &storage)
        } else {
            storage.append(contentsOf: bytes)
        }
        if isASCII, !storage[start...].allSatisfy({ $0 < 0x80 }) { isASCII = false }
        return start..<storage.count
    }

    /// `memcmp` order of two ranges of `bytes` (a shorter prefix first).
    private static func compare(_ bytes: UnsafeBufferPointer<UInt8>, _ left: Range<Int>, _ right: Range<Int>) -> Int {
        let common = min(left.count, right.count)
        if common > 0, let base = bytes.baseAddress {
            let result = memcmp(base + left.lowerBound, base + right.lowerBound, common)
            if result != 0 { return Int(result) }
        }
        return left.count - right.count
    }
}
