/// A `Content-Range` value (RFC 9110 §14.4): `bytes first-last/complete` in a `206`, or
/// `bytes */complete` in a `416`.
struct ContentRange: Sendable, Hashable {
    /// The first byte's offset, `nil` for `bytes */N`.
    var first: Int64?
    /// The last byte's offset (inclusive), `nil` for `bytes */N`.
    var last: Int64?
    /// The complete length, `nil` when the server wrote `*`.
    var complete: Int64?

    /// Creates a value.
    init(first: Int64?, last: Int64?, complete: Int64?) {
        self.first = first
        self.last = last
        self.complete = complete
    }

    /// Parses `value`; `nil` when it is not a well-formed byte range.
    init?(_ value: String) {
        let trimmed = value.trimmingASCIISpaces
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst(6).trimmingASCIISpaces
        guard let slash = spec.firstIndex(of: "/") else { return nil }
        let range = spec[..<slash]
        let total = spec[spec.index(after: slash)...]
        if total == "*" {
            complete = nil
        } else {
            guard let value = Int64(total), value >= 0 else { return nil }
            complete = value
        }
        if range == "*" {
            guard complete != nil else { return nil }
            first = nil
            last = nil
            return
        }
        guard let dash = range.firstIndex(of: "-"), let first = Int64(range[..<dash]),
            let last = Int64(range[range.index(after: dash)...]), first >= 0, last >= first
        else { return nil }
        if let complete, last >= complete { return nil }
        self.first = first
        self.last = last
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    var trimmingASCIISpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
