import Curlew
internal import Foundation

extension GeneratingDecoder {
    /// Invents (or re-reads) a value of type `T` here.
    func value<T: Decodable>(_ type: T.Type) throws -> T {
        switch node.content {
        case .scalar(let existing): return try state.decode(T.self, from: existing)
        case .object, .array: return try T(from: self)
        case .unset: break
        }
        if let hint {
            var random = self.random
            switch hint.kind {
            case .value(let value): return try fix(value, as: T.self)
            case .oneOf(let values): if let value = random.pick(values) { return try fix(value, as: T.self) }
            case .null: return try fix(.null, as: T.self)
            default: break
            }
        }
        if let special = try specialValue(T.self) { return special }
        if let hooked = T.self as? any GenerationHook.Type, let value = try hooked.generate(in: self) as? T { return value }
        if let cases = T.self as? any (CaseIterable & RawRepresentable).Type, let value = try someCase(of: cases, as: T.self) { return value }
        guard codingPath.count <= Self.maximumDepth else {
            throw CurlewError(
                code: .mockGenerationFailed,
                message: "\(T.self) at \(keyPath) is nested \(codingPath.count) levels deep: the model requires itself, so no value of it ends")
        }
        var decoder = self
        if let hinted = T.self as? any MockHinted.Type { decoder.hints = hinted.mockHints }
        let type = ObjectIdentifier(T.self)
        decoder.truncates = truncates || ancestors.lazy.filter { $0 == type }.count >= Self.recursionLimit
        decoder.ancestors.append(type)
        return try T(from: decoder)
    }

    /// Records `value` here and decodes it as `T`.
    func fix<T: Decodable>(_ value: JSONValue, as type: T.Type) throws -> T {
        node.content = .scalar(value)
        return try state.decode(T.self, from: value)
    }

    /// Strings, numbers, booleans, dates, URLs, decimals, UUIDs and data.
    private func specialValue<T: Decodable>(_ type: T.Type) throws -> T? {
        var random = self.random
        let guess = self.guess
        if T.self == String.self { return try fix(.string(MockValues.text(guess, &random)), as: T.self) }
        if T.self == Bool.self { return try fix(.bool(random.int(in: 0...1) == 1), as: T.self) }
        if T.self == Double.self || T.self == Float.self {
            if let hint, case .int(let range) = hint.kind { return try fix(.int(random.int(in: range)), as: T.self) }
            if let hint, case .number(let range) = hint.kind { return try fix(.double(random.number(in: range)), as: T.self) }
            return try fix(.double(MockValues.number(guess, &random)), as: T.self)
        }
        if let integer = T.self as? any FixedWidthInteger.Type {
            var value = MockValues.integer(guess, &random)
            if let hint, case .int(let range) = hint.kind { value = random.int(in: range) }
            return try fix(.int(Self.clamp(value, to: integer)), as: T.self)
        }
        if T.self == Decimal.self {
            if let hint, case .number(let range) = hint.kind { return try fix(.double(random.number(in: range)), as: T.self) }
            return try fix(.double(MockValues.number(guess == .plain ? .price : guess, &random)), as: T.self)
        }
        if T.self == Date.self { return try date(as: T.self) }
        if T.self == URL.self {
            let kind: ValueGuess = guess == .imageURL ? .imageURL : .url
            return try fix(.string(MockValues.text(kind, &random)), as: T.self)
        }
        if T.self == UUID.self { return try fix(.string(MockValues.uuid(&random)), as: T.self) }
        if T.self == Data.self {
            let bytes = (0..<8).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return try fix(.string(Data(bytes).base64EncodedString()), as: T.self)
        }
        return nil
    }

    /// A date in the client decoder's strategy: the first representation it accepts.
    private func date<T: Decodable>(as type: T.Type) throws -> T {
        var random = self.random
        let seconds = MockValues.dateSeconds(&random)
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        var candidates: [JSONValue] = []
        let strategy = state.generator.decoder.dateDecodingStrategy
        if case .secondsSince1970 = strategy { candidates.append(.int(seconds)) }
        if case .millisecondsSince1970 = strategy { candidates.append(.int(seconds * 1000)) }
        if case .deferredToDate = strategy { candidates.append(.double(date.timeIntervalSinceReferenceDate)) }
        candidates += [
            .string(MockValues.iso8601(seconds: seconds)), .int(seconds), .int(seconds * 1000),
            .double(date.timeIntervalSinceReferenceDate), .string(String(MockValues.iso8601(seconds: seconds).prefix(10))),
        ]
        var lastError: (any Error)?
        for candidate in candidates {
            do {
                return try fix(candidate, as: T.self)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "no date representation decodes"))
    }

    /// One of an enum's cases, by its raw value.
    private func someCase<E: CaseIterable & RawRepresentable, T: Decodable>(of cases: E.Type, as type: T.Type) throws -> T? {
        var random = self.random
        guard let chosen = random.pick(Array(E.allCases)), let raw = Self.json(chosen.rawValue) else { return nil }
        return try fix(raw, as: T.self)
    }

    /// A raw value as JSON.
    static func json(_ raw: Any) -> JSONValue? {
        switch raw {
        case let text as String: .string(text)
        case let flag as Bool: .bool(flag)
        case let number as Int: .int(number)
        case let number as any FixedWidthInteger: Int(exactly: number).map(JSONValue.int)
        case let number as Double: .double(number)
        case let number as Float: .double(Double(number))
        default: nil
        }
    }

    private static func clamp(_ value: Int, to type: any FixedWidthInteger.Type) -> Int {
        let low = Int(clamping: type.min)
        let high = Int(clamping: type.max)
        return min(max(value, low), high)
    }
}
