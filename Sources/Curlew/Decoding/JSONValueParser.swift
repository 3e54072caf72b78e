import Foundation

/// Builds a ``JSONValue`` from UTF-8 JSON text in one pass over its bytes.
///
/// `JSONValue`'s `Decodable` conformance can only ask the decoder for one type after another
/// (`Bool`, `Int`, `Double`, `String`, array, object); every refused try builds a `DecodingError`
/// whose coding path is as long as the value is deep, so decoding a body as `JSONValue` costs its
/// size times its nesting — a 4 KB body nested 500 deep, chosen by a server, took half a second.
/// This parser reads the same text linearly.
///
/// It is a fast path, not a second JSON dialect: it returns exactly what
/// `JSONDecoder().decode(JSONValue.self, from:)` returns (checked by FuzzLenientDecoding against
/// Foundation), for RFC 8259 JSON in UTF-8 plus the three liberties Foundation takes — a leading
/// byte order mark, one comma before a closing bracket (`[1,]`, `{"a":1,}`), and a repeated key,
/// whose first value wins.
///
/// Text that is certainly not JSON to Foundation is ``Outcome/invalid(at:)`` at once, because
/// Foundation finds some of it only while decoding — a malformed number or string deep inside is
/// reached after the trial decoding above it. Certainly means: no zero byte and no UTF-16 byte
/// order mark (Foundation would read another encoding), and not inside the value of a repeated
/// key, which Foundation skips without decoding (`{"a":1,"a":05}` is `{"a":1}` to Swift 6.3's
/// Foundation; older ones decoded it and failed, which an undecided outcome leaves to them too).
///
/// Being iterative, it also reads nesting Foundation's recursive decoding might not survive on a
/// thread with a small stack.
///
/// The rest is ``Outcome/undecided`` and the caller decodes with Foundation (which also produces
/// the error, if any): UTF-16 or UTF-32 text, numbers whose reading as an integer Foundation
/// decides through `Decimal` (whole numbers of magnitude 2⁵³ and up written with a fraction or an
/// exponent), numbers beyond `Double`, nesting deeper than 500, and anything wrong inside a
/// repeated key's value. Those stay as slow as `Decodable` is.
///
/// Numbers follow Foundation's reading for `JSONValue`: an integer literal that fits in `Int` is
/// ``JSONValue/int(_:)``; any other number is parsed as a `Double` (correctly rounded, as
/// `strtod`), which is ``JSONValue/int(_:)`` when it is a whole number below 2⁵³ in magnitude
/// (`1.0`, `1e2`, `-0.0`, even `1.0000000000000000001` and `1e-400`) and
/// ``JSONValue/double(_:)`` otherwise.
struct JSONValueParser {
    /// Containers nested deeper than this are left to Foundation (which refuses more than 512).
    static let maximumDepth = 500

    /// `2⁵³`: from here on Foundation reads a whole `Double` as an integer through `Decimal`.
    private static let exactIntegerLimit = 9_007_199_254_740_992.0

    /// A container being filled, innermost last. A struct mutated in place on the stack (an enum's
    /// payload would be copied out and back, and every append would copy the array).
    private struct Frame {
        var isObject: Bool
        var elements: [JSONValue] = []
        var members: [String: JSONValue] = [:]
        /// The key whose value is being read (objects).
        var key = ""
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Whether decoding `JSONValue` with `decoder` gives what this parser gives: no strategy that
    /// changes keys or reads numbers from strings, no JSON5, no implied top-level braces.
    static func readsLike(_ decoder: JSONDecoder) -> Bool {
        guard case .useDefaultKeys = decoder.keyDecodingStrategy, case .throw = decoder.nonConformingFloatDecodingStrategy else {
            return false
        }
        return !decoder.allowsJSON5 && !decoder.assumesTopLevelDictionary
    }

    /// What the parser made of a text.
    enum Outcome: Equatable {
        /// The value, as Foundation reads it.
        case value(JSONValue)
        /// Not JSON to Foundation either; the offset of the first byte found wrong.
        case invalid(at: Int)
        /// Left to Foundation (see the type's summary).
        case undecided
    }

    /// What `text` holds (see ``Outcome``).
    static func read<Bytes: ContiguousBytes>(_ text: Bytes) -> Outcome {
        text.withUnsafeBytes { raw in
            var parser = JSONValueParser(raw.bindMemory(to: UInt8.self))
            if let value = parser.document() { return .value(value) }
            return parser.certain ? .invalid(at: parser.index) : .undecided
        }
    }

    /// The value of `text`, or `nil` when it is invalid or left to Foundation.
    static func parse<Bytes: ContiguousBytes>(_ text: Bytes) -> JSONValue? {
        if case .value(let value) = read(text) { return value }
        return nil
    }

    /// The error `JSONValue` decoding throws for ``Outcome/invalid(at:)``.
    static func invalidError(at offset: Int) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "The given data was not valid JSON (byte \(offset))."))
    }

    /// Set where the parser gives up on a text Foundation might still read (see ``Outcome``).
    private var undecided = false
    /// The stack depth of the value of a repeated key being read, which Foundation skips.
    private var skippedLevel: Int?

    /// Whether a `nil` from ``document()`` means Foundation refuses the text too.
    private var certain: Bool {
        guard !undecided, skippedLevel == nil else { return false }
        if let first = bytes.first, first == 0xFE || first == 0xFF { return false }
        return !bytes.contains(0)
    }

    /// `nil`, having marked the text as one to leave to Foundation.
    private mutating func leftToFoundation() -> JSONValue? {
        undecided = true
        return nil
    }

    private mutating func document() -> JSONValue? {
        var stack: [Frame] = []
        // One UTF-8 byte order mark, as Foundation allows.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        while true {
            // A value starts here: a scalar, an empty container, or a container to fill.
            guard index < bytes.count else { return nil }
            var value: JSONValue
            switch bytes[index] {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                guard stack.count < Self.maximumDepth else { return leftToFoundation() }
                let isObject = bytes[index] == UInt8(ascii: "{")
                index += 1
                if closes(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    value = isObject ? .object([:]) : .array([])
                } else if isObject {
                    guard let key = memberKey() else { return nil }
                    stack.append(Frame(isObject: true, key: key))
                    continue
                } else {
                    stack.append(Frame(isObject: false))
                    continue
                }
            case UInt8(ascii: "\""):
                guard let text = string() else { return nil }
                value = .string(text)
            case UInt8(ascii: "t"):
                guard literal("true") else { return nil }
                value = .bool(true)
            case UInt8(ascii: "f"):
                guard literal("false") else { return nil }
                value = .bool(false)
            case UInt8(ascii: "n"):
                guard literal("null") else { return nil }
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard let number = number() else { return nil }
                value = number
            default:
                return nil
            }
            // The value is complete: hand it to its container, closing every container it completes.
            while true {
                skipWhitespace()
                guard !stack.isEmpty else {
                    // (Not a `? :` with `nil`: JSONValue is ExpressibleByNilLiteral, so that `nil` is `.null`.)
                    guard index == bytes.count else { return nil }
                    return value
                }
                guard index < bytes.count else { return nil }
                let next = bytes[index]
                index += 1
                let top = stack.count - 1
                if !stack[top].isObject {
                    stack[top].elements.append(value)
                    // Foundation also takes one comma before the bracket: `[1,]`.
                    if next == UInt8(ascii: "]") || next == UInt8(ascii: ",") && closes(UInt8(ascii: "]")) {
                        value = .array(stack.removeLast().elements)
                        continue
                    }
                    guard next == UInt8(ascii: ",") else { return nil }
                } else {
                    // Foundation keeps the first of equal keys (equal as Strings: "é" and "e\u{301}" too).
                    let key = stack[top].key
                    if stack[top].members[key] == nil { stack[top].members[key] = value }
                    let ends = next == UInt8(ascii: "}") || next == UInt8(ascii: ",") && closes(UInt8(ascii: "}"))
                    guard ends || next == UInt8(ascii: ",") else { return nil }
                    // A skipped value ends at the delimiter after it (Foundation's tokens: `05` is one).
                    if stack.count == skippedLevel { skippedLevel = nil }
                    if ends {
                        value = .object(stack.removeLast().members)
                        continue
                    }
                    guard let key = memberKey() else { return nil }
                    stack[top].key = key
                    if skippedLevel == nil, stack[top].members[key] != nil { skippedLevel = stack.count }
                }
                break
            }
            skipWhitespace()
        }
    }

    // MARK: Pieces

    /// Whether `bracket` follows (past whitespace), consuming both if so: an empty container, or
    /// the comma Foundation allows before a closing bracket.
    private mutating func closes(_ bracket: UInt8) -> Bool {
        skipWhitespace()
        guard peek(bracket) else { return false }
        index += 1
        return true
    }

    private func peek(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// `"key"` `:` after optional whitespace, leaving the index at the member's value.
    private mutating func memberKey() -> String? {
        skipWhitespace()
        guard peek(UInt8(ascii: "\"")), let key = string() else { return nil }
        skipWhitespace()
        guard peek(UInt8(ascii: ":")) else { return nil }
        index += 1
        skipWhitespace()
        return key
    }

    /// A string starting at the opening quote; `nil` for a control character, a bad escape, a lone
    /// surrogate or bytes that are not UTF-8 (all of which Foundation refuses).
    private mutating func string() -> String? {
        index += 1
        let start = index
        // The common case: no escape, one validated copy.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        var decoded = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    UTF8.encode(scalar) { decoded.append($0) }
                default: return nil
                }
            default:
                if byte < 0x20 { return nil }
                decoded.append(byte)
            }
        }
        return nil
    }

    /// The scalar of `XXXX` after `\u`, joining a surrogate pair written as two escapes.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let unit = hexQuad() else { return nil }
        switch unit {
        case 0xD800...0xDBFF:
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
            index += 2
            guard let low = hexQuad(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        case 0xDC00...0xDFFF:
            return nil
        default:
            return Unicode.Scalar(unit)
        }
    }

    private mutating func hexQuad() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var unit: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = PercentEncoding.hexValue(bytes[index]) else { return nil }
            unit = unit << 4 | UInt32(digit)
            index += 1
        }
        return unit
    }

    /// A number in RFC 8259's grammar, read as Foundation reads it for `JSONValue`.
    private mutating func number() -> JSONValue? {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits() > 0 else { return nil }
        }
        var isInteger = true
        if peek(UInt8(ascii: ".")) {
            index += 1
            guard digits() > 0 else { return nil }
            isInteger = false
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard digits() > 0 else { return nil }
            isInteger = false
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if isInteger, let integer = Self.integer(text, negative: negative) { return .int(integer) }
        // Only ASCII digits, sign, point and exponent are left: the bytes are a valid String.
        guard let double = Double(String(decoding: text, as: UTF8.self)), double.isFinite else { return leftToFoundation() }
        guard let whole = Int(exactly: double) else { return .double(double) }
        guard abs(double) < Self.exactIntegerLimit else { return leftToFoundation() }
        return .int(whole)
    }

    /// Skips ASCII digits; how many.
    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return index - start
    }

    /// An integer literal's value, `nil` when it does not fit in `Int`.
    private static func integer(_ text: UnsafeBufferPointer<UInt8>, negative: Bool) -> Int? {
        // Accumulated negatively, so that Int.min fits.
        var value = 0
        for byte in text.dropFirst(negative ? 1 : 0) {
            let (shifted, overflowTen) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowDigit) = shifted.subtractingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
            guard !overflowTen, !overflowDigit else { return nil }
            value = next
        }
        if negative { return value }
        let (positive, overflow) = (0).subtractingReportingOverflow(value)
        return overflow ? nil : positive
    }
}
