internal import Foundation

/// A parameter that could not be encoded: a non-finite number in JSON, a nested value in a header.
struct ParameterEncodingError: Error, CustomStringConvertible {
    let description: String
}

/// The one parameter encoder: a ``ParameterList`` → query items (for a URL query or a form body)
/// or a JSON object, following ``ParameterEncodingOptions``.
struct ParameterEncoder {
    let options: ParameterEncodingOptions

    // MARK: Query strings and forms

    /// Flattens the list into name/value pairs; a `nil` value is a bare name.
    func queryItems(_ list: ParameterList) throws(ParameterEncodingError) -> [URLQueryItem] {
        var items: [URLQueryItem] = []
        items.reserveCapacity(list.count)
        for entry in ordered(list.entries) {
            try flatten(entry.value, name: entry.name, into: &items)
        }
        return items
    }

    private func ordered(_ entries: [ParameterList.Entry]) -> [ParameterList.Entry] {
        options.sortedKeys ? entries.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) } : entries
    }

    private func flatten(_ value: ParameterValue, name: String, into items: inout [URLQueryItem]) throws(ParameterEncodingError) {
        switch value {
        case .null:
            switch options.nilStyle {
            case .omit: break
            case .bareName: items.append(URLQueryItem(name: name, value: nil))
            case .emptyValue: items.append(URLQueryItem(name: name, value: ""))
            }
        case .array(let elements):
            switch options.arrayStyle {
            case .repeated:
                for element in elements { try flatten(element, name: name, into: &items) }
            case .brackets:
                for element in elements { try flatten(element, name: name + "[]", into: &items) }
            case .indexed:
                for (index, element) in elements.enumerated() { try flatten(element, name: "\(name)[\(index)]", into: &items) }
            case .commaSeparated:
                var parts: [String] = []
                for element in elements {
                    guard let text = try scalarText(element) else { continue }
                    parts.append(text)
                }
                items.append(URLQueryItem(name: name, value: parts.joined(separator: ",")))
            }
        case .dictionary(let members):
            let keys = options.sortedKeys ? members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } : Array(members.keys)
            for key in keys {
                if let member = members[key] { try flatten(member, name: "\(name)[\(key)]", into: &items) }
            }
        default:
            items.append(URLQueryItem(name: name, value: try scalarText(value)))
        }
    }

    /// The text of a scalar; `nil` for `.null`.
    /// - Throws: For arrays and dictionaries, which have no single text.
    func scalarText(_ value: ParameterValue) throws(ParameterEncodingError) -> String? {
        switch value {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .double(let number): return Self.text(of: number)
        case .bool(let flag):
            switch options.boolStyle {
            case .literal: return flag ? "true" : "false"
            case .numeric: return flag ? "1" : "0"
            }
        case .date(let date): return try dateText(date)
        case .null: return nil
        case .array(let elements):
            var parts: [String] = []
            for element in elements {
                if let text = try scalarText(element) { parts.append(text) }
            }
            return parts.joined(separator: ",")
        case .dictionary:
            throw ParameterEncodingError(description: "a dictionary has no single text value")
        }
    }

    private func dateText(_ date: Date) throws(ParameterEncodingError) -> String {
        switch options.dateStyle {
        case .iso8601: date.formatted(.iso8601)
        case .secondsSince1970: Self.text(of: date.timeIntervalSince1970)
        case .millisecondsSince1970: String(try Self.milliseconds(of: date))
        case .custom(let format): format(date)
        }
    }

    /// Whole milliseconds since 1970, or the reason a date has none (not finite, or past what
    /// 64 bits count: about 292 million years).
    static func milliseconds(of date: Date) throws(ParameterEncodingError) -> Int64 {
        guard let milliseconds = Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded()) else {
            throw ParameterEncodingError(description: "the date \(date.timeIntervalSince1970) s since 1970 has no millisecond count")
        }
        return milliseconds
    }

    /// `3` for whole numbers, `2.5` otherwise.
    static func text(of number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return String(number)
    }

    // MARK: JSON

    /// The list as a JSON object's bytes.
    func json(_ list: ParameterList) throws(ParameterEncodingError) -> Data {
        var members: [(String, JSONValue)] = []
        for entry in ordered(list.entries) {
            if case .null = entry.value, options.nilStyle == .omit { continue }
            members.append((entry.name, try jsonValue(entry.value)))
        }
        var writer = JSONWriter(sortedKeys: options.sortedKeys)
        writer.writeObject(members)
        return writer.data
    }

    private func jsonValue(_ value: ParameterValue) throws(ParameterEncodingError) -> JSONValue {
        switch value {
        case .string(let text): return .string(text)
        case .int(let number): return .int(number)
        case .double(let number):
            guard number.isFinite else { throw ParameterEncodingError(description: "\(number) cannot be encoded as JSON") }
            return .double(number)
        case .bool(let flag): return .bool(flag)
        case .null: return .null
        case .date(let date):
            switch options.dateStyle {
            case .secondsSince1970: return .double(date.timeIntervalSince1970)
            case .millisecondsSince1970: return .int(Int(try Self.milliseconds(of: date)))
            default: return .string(try dateText(date))
            }
        case .array(let elements):
            var values: [JSONValue] = []
            values.reserveCapacity(elements.count)
            for element in elements { values.append(try jsonValue(element)) }
            return .array(values)
        case .dictionary(let members):
            var object: [String: JSONValue] = [:]
            for (key, member) in members {
                if case .null = member, options.nilStyle == .omit { continue }
                object[key] = try jsonValue(member)
            }
            return .object(object)
        }
    }
}
