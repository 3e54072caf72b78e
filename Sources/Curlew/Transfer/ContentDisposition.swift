internal import Foundation

/// Reads the file name a `Content-Disposition` header suggests and makes it safe to use as the
/// last component of a path.
///
/// `filename*` (RFC 5987/8187: `UTF-8''%E2%82%AC%20rates.csv`) wins over `filename`; it is
/// percent-decoded first and sanitised after, so an encoded `%2F` cannot smuggle a separator.
/// Sanitising keeps only the last component after any `/` or `\`, drops NUL and control
/// characters, removes leading dots and spaces (no hidden files, no `.` or `..`) and trailing dots
/// and spaces, and bounds the result to ``maximumLength`` UTF-8 bytes (keeping a short
/// extension). What is left empty is no name at all (`nil`).
///
/// Linear in the header's length: every step is constant-time by construction (indices into
/// arrays and slices, appends; no removal from the front of a string, which moves the rest) and
/// the steps are counted (`steps:`), so a test proves linearity by counting, not by a clock.
enum ContentDisposition {
    /// The longest name returned, in UTF-8 bytes (file systems allow 255).
    static let maximumLength = 200

    /// The sanitised suggested file name of a `Content-Disposition` value, or `nil`.
    static func suggestedFileName(_ value: String?) -> String? {
        var steps = 0
        return suggestedFileName(value, steps: &steps)
    }

    /// ``suggestedFileName(_:)``, adding the constant-time steps it took to `steps`.
    static func suggestedFileName(_ value: String?, steps: inout Int) -> String? {
        guard let value else { return nil }
        let parameters = Self.parameters(value, steps: &steps)
        if let extended = parameters["filename*"], let decoded = decodeExtended(extended), let name = sanitised(decoded, steps: &steps) {
            return name
        }
        guard let plain = parameters["filename"] else { return nil }
        return sanitised(plain, steps: &steps)
    }

    /// The parameters of a header value, names lower-cased, quoted strings unquoted.
    static func parameters(_ value: String) -> [String: String] {
        var steps = 0
        return parameters(value, steps: &steps)
    }

    /// ``parameters(_:)``, adding one step per scalar consumed to `steps`.
    static func parameters(_ value: String, steps: inout Int) -> [String: String] {
        var result: [String: String] = [:]
        var scalars = Array(value.unicodeScalars)[...]
        /// Drops the first scalar of the slice: constant time (a slice of an array moves its start).
        func advance() {
            scalars = scalars.dropFirst()
            steps += 1
        }
        // Skip the disposition type.
        while let first = scalars.first, first != ";" { advance() }
        while !scalars.isEmpty {
            advance()  // ';'
            var name = ""
            while let first = scalars.first, first != "=", first != ";" {
                name.unicodeScalars.append(first)
                advance()
            }
            guard scalars.first == "=" else { continue }
            advance()
            while scalars.first == " " || scalars.first == "\t" { advance() }
            var parameterValue = ""
            if scalars.first == "\"" {
                advance()
                while let first = scalars.first, first != "\"" {
                    advance()
                    if first == "\\", let escaped = scalars.first {
                        parameterValue.unicodeScalars.append(escaped)
                        advance()
                    } else {
                        parameterValue.unicodeScalars.append(first)
                    }
                }
                advance()
                while let first = scalars.first, first != ";" { advance() }
            } else {
                while let first = scalars.first, first != ";" {
                    parameterValue.unicodeScalars.append(first)
                    advance()
                }
                parameterValue = parameterValue.trimmingASCIISpaces
            }
            let key = name.trimmingASCIISpaces.lowercased()
            if !key.isEmpty, result[key] == nil { result[key] = parameterValue }
        }
        return result
    }

    /// Decodes `charset'language'percent-encoded` (UTF-8 or ISO-8859-1); `nil` when malformed.
    static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        var bytes: [UInt8] = []
        var utf8 = Array(parts[2].utf8)[...]
        while let byte = utf8.first {
            utf8 = utf8.dropFirst()
            if byte == UInt8(ascii: "%") {
                guard utf8.count >= 2, let high = PercentEncoding.hexValue(utf8[utf8.startIndex]), let low = PercentEncoding.hexValue(utf8[utf8.startIndex + 1]) else { return nil }
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        switch charset {
        case "utf-8": return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1": return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default: return nil
        }
    }

    /// `name` made safe as one path component, or `nil` when nothing usable is left.
    static func sanitised(_ name: String) -> String? {
        var steps = 0
        return sanitised(name, steps: &steps)
    }

    /// ``sanitised(_:)``, adding one step per scalar looked at to `steps`.
    static func sanitised(_ name: String, steps: inout Int) -> String? {
        var scalars: [Unicode.Scalar] = []
        for scalar in name.unicodeScalars {
            steps += 1
            if scalar == "/" || scalar == "\\" {
                scalars.removeAll(keepingCapacity: true)  // keep only the last component
            } else if scalar.value >= 0x20, scalar.value != 0x7F, !(0x80...0x9F).contains(scalar.value),
                scalar.value != 0x2028, scalar.value != 0x2029
            {
                scalars.append(scalar)
            }
        }
        // Trimmed by finding both ends once, by index: removing scalars one at a time from the
        // front was quadratic (a header of 100,000 dots took a second).
        func isKept(_ scalar: Unicode.Scalar) -> Bool {
            steps += 1
            return scalar != "." && scalar != " "
        }
        guard let first = scalars.firstIndex(where: isKept), let last = scalars.lastIndex(where: isKept) else { return nil }
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: scalars[first...last])
        return bounded(String(kept))
    }

    /// Cuts `name` to ``maximumLength`` UTF-8 bytes on a character boundary, keeping an extension
    /// of up to 16 bytes.
    private static func bounded(_ name: String) -> String {
        guard name.utf8.count > maximumLength else { return name }
        var stem = Substring(name)
        var suffix = ""
        if let dot = name.lastIndex(of: "."), name.utf8.distance(from: dot, to: name.utf8.endIndex) <= 16 {
            stem = name[..<dot]
            suffix = String(name[dot...])
        }
        var kept = ""
        for character in stem {
            if kept.utf8.count + character.utf8.count + suffix.utf8.count > maximumLength { break }
            kept.append(character)
        }
        if kept.isEmpty {
            // One character longer than the limit (a letter with hundreds of combining marks):
            // cut it by scalars, or the result would be the bare extension, a hidden file.
            for scalar in stem.unicodeScalars {
                if kept.utf8.count + String(scalar).utf8.count + suffix.utf8.count > maximumLength { break }
                kept.unicodeScalars.append(scalar)
            }
        }
        return kept + suffix
    }
}
