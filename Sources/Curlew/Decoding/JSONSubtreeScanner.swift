internal import Foundation

/// Why a key path could not be followed.
struct JSONKeyPathFailure: Error {
    /// The path up to and including the component that failed.
    let path: String
    let message: String
}

/// Finds the bytes of the value at a ``JSONKeyPath`` in a JSON body without building any value:
/// siblings are skipped byte by byte (iteratively, so nesting depth cannot exhaust the stack),
/// and only the located slice is handed to the decoder, which validates it.
struct JSONSubtreeScanner {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The byte range (relative to `data.startIndex`) of the value at `path`.
    static func locate(_ path: JSONKeyPath, in data: Data) throws(JSONKeyPathFailure) -> Range<Int> {
        let result: Result<Range<Int>, JSONKeyPathFailure> = data.withUnsafeBytes { buffer in
            var scanner = JSONSubtreeScanner(buffer)
            do throws(JSONKeyPathFailure) {
                return .success(try scanner.follow(path))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The kind of JSON value (`object`, `array`, `string`, `number`, `bool`, `null`) at a
    /// decoder's coding path, or `nil` when the path does not lead to one. Each key is taken as an
    /// index where the scanner meets an array and as a name where it meets an object, as the
    /// decoder did. Linear in the body, whatever its nesting (the decoding-failure message asks
    /// this of bodies a server chose).
    static func kindOfValue(at codingPath: [any CodingKey], in data: Data) -> String? {
        data.withUnsafeBytes { buffer -> String? in
            var scanner = JSONSubtreeScanner(buffer)
            scanner.skipWhitespace()
            for key in codingPath {
                let component: JSONKeyPath.Component
                switch scanner.peek() {
                case UInt8(ascii: "["):
                    guard let index = key.intValue, index >= 0 else { return nil }
                    component = .index(index)
                case UInt8(ascii: "{"):
                    component = .key(key.stringValue)
                default:
                    return nil
                }
                guard (try? scanner.descend(JSONKeyPath(components: [component]))) != nil else { return nil }
            }
            guard scanner.peek() != nil else { return nil }
            let kind = scanner.kindHere()
            return kind == "invalid JSON" ? nil : kind
        }
    }

    private mutating func follow(_ path: JSONKeyPath) throws(JSONKeyPathFailure) -> Range<Int> {
        try descend(path)
        let start = position
        try skipValue(at: path.description)
        return start..<position
    }

    /// Moves to the first byte of the value at `path` (siblings skipped, the value itself not).
    private mutating func descend(_ path: JSONKeyPath) throws(JSONKeyPathFailure) {
        var walked: [JSONKeyPath.Component] = []
        for component in path.components {
            let here = JSONKeyPath.render(walked)
            walked.append(component)
            let target = JSONKeyPath.render(walked)
            skipWhitespace()
            switch component {
            case .key(let wanted):
                guard peek() == UInt8(ascii: "{") else {
                    throw JSONKeyPathFailure(path: here, message: "\(label(here)): expected object, found \(kindHere())")
                }
                position += 1
                var found = false
                while true {
                    skipWhitespace()
                    if peek() == UInt8(ascii: "}") { break }
                    let key = try readString(at: target)
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"), at: target)
                    skipWhitespace()
                    if key == wanted {
                        found = true
                        break
                    }
                    try skipValue(at: target)
                    skipWhitespace()
                    if peek() == UInt8(ascii: ",") { position += 1 } else { try expect(UInt8(ascii: "}"), at: target); position -= 1 }
                }
                guard found else { throw JSONKeyPathFailure(path: target, message: "\(target): required key is missing") }
            case .index(let wanted):
                guard peek() == UInt8(ascii: "[") else {
                    throw JSONKeyPathFailure(path: here, message: "\(label(here)): expected array, found \(kindHere())")
                }
                position += 1
                var index = 0
                var found = false
                while true {
                    skipWhitespace()
                    if peek() == UInt8(ascii: "]") { break }
                    if index == wanted {
                        found = true
                        break
                    }
                    try skipValue(at: target)
                    index += 1
                    skipWhitespace()
                    if peek() == UInt8(ascii: ",") { position += 1 } else { try expect(UInt8(ascii: "]"), at: target); position -= 1 }
                }
                guard found else {
                    throw JSONKeyPathFailure(path: target, message: "\(target): index out of range (the array has \(index) elements)")
                }
            }
        }
        skipWhitespace()
    }

    private func label(_ path: String) -> String { path.isEmpty ? "<root>" : path }

    private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    private func kindHere() -> String {
        guard let byte = peek() else { return "the end of the body" }
        return switch byte {
        case UInt8(ascii: "{"): "object"
        case UInt8(ascii: "["): "array"
        case UInt8(ascii: "\""): "string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): "bool"
        case UInt8(ascii: "n"): "null"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): "number"
        default: "invalid JSON"
        }
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    private mutating func expect(_ byte: UInt8, at path: String) throws(JSONKeyPathFailure) {
        guard peek() == byte else {
            throw JSONKeyPathFailure(path: path, message: "\(label(path)): the body is not valid JSON near byte \(position)")
        }
        position += 1
    }

    /// Reads a string token; escapes are resolved, invalid UTF-8 is an error.
    private mutating func readString(at path: String) throws(JSONKeyPathFailure) -> String {
        let start = position
        try skipString(at: path)
        let raw = UnsafeRawBufferPointer(rebasing: bytes[(start + 1)..<(position - 1)])
        if !raw.contains(UInt8(ascii: "\\")), let text = String(validating: raw, as: UTF8.self) { return text }
        let token = Data(UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
        guard let text = try? JSONDecoder().decode(String.self, from: token) else {
            throw JSONKeyPathFailure(path: path, message: "\(label(path)): a key is not a valid JSON string")
        }
        return text
    }

    private mutating func skipString(at path: String) throws(JSONKeyPathFailure) {
        try expect(UInt8(ascii: "\""), at: path)
        while let byte = peek() {
            position += 1
            if byte == UInt8(ascii: "\\") {
                position += 1
            } else if byte == UInt8(ascii: "\"") {
                return
            }
        }
        throw JSONKeyPathFailure(path: path, message: "\(label(path)): the body ends inside a string")
    }

    /// Skips one value of any depth without recursion.
    private mutating func skipValue(at path: String) throws(JSONKeyPathFailure) {
        var depth = 0
        repeat {
            skipWhitespace()
            guard let byte = peek() else {
                throw JSONKeyPathFailure(path: path, message: "\(label(path)): the body ends early")
            }
            switch byte {
            case UInt8(ascii: "\""):
                try skipString(at: path)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                position += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else {
                    throw JSONKeyPathFailure(path: path, message: "\(label(path)): the body is not valid JSON near byte \(position)")
                }
                depth -= 1
                position += 1
            case UInt8(ascii: ","), UInt8(ascii: ":"):
                guard depth > 0 else {
                    throw JSONKeyPathFailure(path: path, message: "\(label(path)): the body is not valid JSON near byte \(position)")
                }
                position += 1
            default:
                // A literal or number: up to the next delimiter.
                while let next = peek(), !Self.isDelimiter(next) { position += 1 }
            }
        } while depth > 0
    }

    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ":"), 0x20, 0x0A, 0x0D, 0x09: true
        default: false
        }
    }
}
