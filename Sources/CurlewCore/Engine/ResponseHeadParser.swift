package import HTTPTypes

/// Collects libcurl's header lines on the engine thread, keeping only the last response's block
/// (each status line — a redirect, a `100 Continue`, a proxy's `CONNECT` answer — starts over),
/// and parses a block into `HTTPFields` on the caller's thread.
///
/// A status line starts a head only where a head can start: first, or after the blank line that
/// ended one. A field line that merely begins with `HTTP/` is a (malformed) field, never a new
/// head. Lines after the last head's blank line are trailer fields (libcurl hands a chunked
/// body's trailers to the same callback): they are not header fields (RFC 9110 §6.5.1) and are
/// dropped, so a trailer can neither add to the head nor break its framing checks.
package struct ResponseHeadParser {
    /// What one line of libcurl's header callback was.
    package enum Line: Equatable {
        /// A status line that starts a new head.
        case status
        /// A field line of the current head, or the blank line that ends it.
        case field
        /// A trailer field after the body (or its terminating blank line), dropped.
        case trailer
    }

    /// The final response's header lines as received, without its status line.
    package private(set) var block: [UInt8] = []
    /// Header bytes seen so far, across all responses (activity for idle detection).
    package private(set) var bytesSeen = 0
    /// The status code of the last status line (`HTTP/1.1 200 OK`, `HTTP/2 304`), 0 before one
    /// arrived or when it has no three-digit code.
    package private(set) var status = 0

    /// Whether the next line may start a head: none has started, or the last one has ended.
    private var atHeadStart = true
    /// Whether a head has ended: a line at a head's start that is no status line is a trailer.
    private var headEnded = false

    /// The block's first allocation: room for a typical response head. Under 1 KiB with the
    /// array header, so glibc serves it from its per-thread cache (1 KiB took its slow path).
    package static let initialCapacity = 960

    /// Engine thread: records one header line and says what it was.
    @discardableResult
    package mutating func consume(line bytes: UnsafeRawBufferPointer) -> Line {
        bytesSeen += bytes.count
        if atHeadStart {
            if Self.isStatusLine(bytes) {
                block.removeAll(keepingCapacity: true)
                status = Self.statusCode(of: bytes)
                atHeadStart = false
                return .status
            }
            if headEnded { return .trailer }
        }
        if Self.isBlank(bytes) {
            atHeadStart = true
            headEnded = true
        }
        // One allocation for a typical head (a few hundred bytes) instead of three as it grows.
        if block.capacity == 0 { block.reserveCapacity(Self.initialCapacity) }
        block.append(contentsOf: bytes)
        return .field
    }

    /// Whether a line is empty but for its CR LF (the end of a head).
    private static func isBlank(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }
    }

    /// The three-digit code after the status line's first space, 0 when there is none.
    static func statusCode(of line: UnsafeRawBufferPointer) -> Int {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")), space + 3 < line.count else { return 0 }
        var code = 0
        var index = space + 1
        while index <= space + 3 {
            let digit = line[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return 0 }
            code = code * 10 + Int(digit)
            index += 1
        }
        return code >= 100 ? code : 0
    }

    /// Whether a header line is a status line (`HTTP/…`), by five byte comparisons rather than
    /// the generic `starts(with:)`.
    package static func isStatusLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 5 && bytes[0] == UInt8(ascii: "H") && bytes[1] == UInt8(ascii: "T") && bytes[2] == UInt8(ascii: "T")
            && bytes[3] == UInt8(ascii: "P") && bytes[4] == UInt8(ascii: "/")
    }

    /// Whether the block has a field named `name` (lower-case ASCII) with a non-empty value,
    /// compared without regard to case; asked only of redirect heads.
    package func hasField(named name: StaticString) -> Bool {
        let wanted = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        var lineStart = 0
        while lineStart < block.count {
            var lineEnd = lineStart
            while lineEnd < block.count, block[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            let colon = lineStart + wanted.count
            if colon < lineEnd, block[colon] == UInt8(ascii: ":"),
                wanted.indices.allSatisfy({ block[lineStart + $0] | 0x20 == wanted[$0] }),
                block[(colon + 1)..<lineEnd].contains(where: { $0 > UInt8(ascii: " ") })
            {
                return true
            }
            lineStart = lineEnd + 1
        }
        return false
    }

    /// Caller side: the fields of a block. Lines without a colon, with an invalid name, or
    /// starting with whitespace (obsolete folding) are skipped.
    package static func fields(of block: [UInt8]) -> HTTPFields {
        var fields = HTTPFields()
        var lineStart = 0
        while lineStart < block.count {
            var lineEnd = lineStart
            while lineEnd < block.count, block[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            var contentEnd = lineEnd
            while contentEnd > lineStart, block[contentEnd - 1] == UInt8(ascii: "\r") || block[contentEnd - 1] == UInt8(ascii: "\n") {
                contentEnd -= 1
            }
            Self.parse(block[lineStart..<contentEnd], into: &fields)
            lineStart = lineEnd + 1
        }
        return fields
    }

    private static func parse(_ line: ArraySlice<UInt8>, into fields: inout HTTPFields) {
        guard let first = line.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t"),
            let colon = line.firstIndex(of: UInt8(ascii: ":")),
            let name = HTTPField.Name(String(decoding: line[line.startIndex..<colon], as: UTF8.self))
        else { return }
        var valueStart = colon + 1
        while valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") || line[valueStart] == UInt8(ascii: "\t") {
            valueStart += 1
        }
        fields.append(HTTPField(name: name, value: line[valueStart..<line.endIndex]))
    }
}
