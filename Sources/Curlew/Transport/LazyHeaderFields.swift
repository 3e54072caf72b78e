internal import Glibc
internal import HTTPTypes
internal import Synchronization

/// Response headers as they came from the transport, turned into `HTTPFields` only when someone
/// reads them: building `HTTPFields` validates every name and value, and most calls never look
/// at the headers.
///
/// Copies share the raw block and its parsed form; setting fields replaces both.
struct LazyHeaderFields: Sendable {
    private enum Storage: Sendable {
        case fields(HTTPFields)
        case block(RawHeaderBlock)
    }

    private var storage: Storage

    /// Headers that are already fields.
    init(_ fields: HTTPFields) {
        storage = .fields(fields)
    }

    /// Header lines as received (`Name: value\r\n` each, no status line).
    init(block: [UInt8]) {
        storage = .block(RawHeaderBlock(block))
    }

    /// The headers as `HTTPFields` (parsed on the first read of a raw block).
    var fields: HTTPFields {
        get {
            switch storage {
            case .fields(let fields): fields
            case .block(let block): block.fields
            }
        }
        set { storage = .fields(newValue) }
    }

    /// Whether the headers are still the transport's raw block, never turned into `HTTPFields`.
    var isUnparsedBlock: Bool {
        if case .block(let block) = storage { return !block.isParsed }
        return false
    }

    /// What `fields[name]` returns (the values of every field of that name, combined), without
    /// building `HTTPFields` for a raw block that was not parsed yet.
    subscript(name: HTTPField.Name) -> String? {
        switch storage {
        case .fields(let fields): fields[name]
        case .block(let block): block[name]
        }
    }
}

/// A raw header block and, once read, its `HTTPFields` (parsed at most once; the mutex guards
/// the parsed value).
final class RawHeaderBlock: Sendable {
    let bytes: [UInt8]
    private let parsed = Mutex<HTTPFields?>(nil)

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether ``fields`` has been built.
    var isParsed: Bool { parsed.withLock { $0 != nil } }

    var fields: HTTPFields {
        parsed.withLock { parsed in
            if let parsed { return parsed }
            let fields = ResponseHeadParser.fields(of: bytes)
            parsed = fields
            return fields
        }
    }

    /// What `fields[name]` would return. Scans the block when it was not parsed yet and the
    /// name occurs once with a plain value; otherwise parses.
    subscript(name: HTTPField.Name) -> String? {
        if let parsed = parsed.withLock({ $0 }) { return parsed[name] }
        var wanted = name.canonicalName
        var found: String?
        var needsFields = false
        wanted.withUTF8 { wanted in
            bytes.withUnsafeBufferPointer { block in
                guard let base = block.baseAddress else { return }
                var lineStart = 0
                while lineStart < block.count, !needsFields {
                    // `memchr` rather than a byte loop.
                    let lineEnd =
                        memchr(base + lineStart, Int32(UInt8(ascii: "\n")), block.count - lineStart)
                        .map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? block.count
                    switch Self.value(of: wanted, in: UnsafeBufferPointer(rebasing: block[lineStart..<lineEnd])) {
                    case .none:
                        break
                    case .plain(let value):
                        if found == nil { found = value } else { needsFields = true }
                    case .unusual:
                        needsFields = true
                    }
                    lineStart = lineEnd + 1
                }
            }
        }
        return needsFields ? fields[name] : found
    }

    private enum Match {
        case none
        case plain(String)
        /// A value with control bytes or non-ASCII (which `HTTPField` would legalise).
        case unusual
    }

    /// Whether `line` is `name: value` for the lower-case `name`, and its trimmed value.
    private static func value(of name: UnsafeBufferPointer<UInt8>, in line: UnsafeBufferPointer<UInt8>) -> Match {
        guard line.count > name.count, line[name.count] == UInt8(ascii: ":") else { return .none }
        for index in 0..<name.count {
            var byte = line[index]
            if byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { byte += 32 }
            guard byte == name[index] else { return .none }
        }
        var start = name.count + 1
        var end = line.count
        while start < end, line[start] == UInt8(ascii: " ") || line[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, line[end - 1] == UInt8(ascii: "\r") || line[end - 1] == UInt8(ascii: " ") || line[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        let value = UnsafeBufferPointer(rebasing: line[start..<end])
        guard value.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return .unusual }
        return .plain(String(decoding: value, as: UTF8.self))
    }
}
