#if canImport(Glibc)
    public import Glibc
#endif

extension UnsafeBufferPointer<UInt8> {
    /// Whether the bytes start with `prefix`, by one `memcmp` rather than the generic
    /// `starts(with:)` over `String.UTF8View`; this is on every request's path (scheme checks).
    @inlinable package func hasPrefix(_ prefix: StaticString) -> Bool {
        guard let base = baseAddress, count >= prefix.utf8CodeUnitCount else { return prefix.utf8CodeUnitCount == 0 }
        return memcmp(base, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
    }

    /// The index of the first `byte`, by `memchr` rather than the generic `firstIndex(of:)`.
    @inlinable package func firstIndex(ofByte byte: UInt8) -> Int? {
        firstIndex(ofByte: byte, in: 0..<count)
    }

    /// The index of the first `byte` in `range`, by `memchr`.
    @inlinable package func firstIndex(ofByte byte: UInt8, in range: Range<Int>) -> Int? {
        guard let base = baseAddress, !range.isEmpty else { return nil }
        return memchr(base + range.lowerBound, Int32(byte), range.count).map {
            UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base
        }
    }
}

extension String {
    /// Whether the string's UTF-8 starts with `prefix` (see `UnsafeBufferPointer.hasPrefix`).
    @inlinable package func hasUTF8Prefix(_ prefix: StaticString) -> Bool {
        utf8.withContiguousStorageIfAvailable { $0.hasPrefix(prefix) } ?? utf8.starts(with: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
    }
}
