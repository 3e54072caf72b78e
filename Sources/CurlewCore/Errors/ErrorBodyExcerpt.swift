/// The short, redacted excerpt of a response body that ``CurlewError/description`` embeds.
///
/// ``CurlewError/bodySnippet`` keeps up to ``CurlewError/bodySnippetLimit`` characters for code
/// that reads it; a description — what ends up in a service's log line or error response — keeps
/// at most ``CurlewError/descriptionBodyLimit`` characters on one line, with the values of
/// secret-looking JSON members and form fields (`"token": "…"`, `password=…`) replaced by
/// `<redacted>` before it is cut.
package enum ErrorBodyExcerpt {
    /// One line, secrets redacted, at most `limit` characters (then `…`).
    package static func excerpt(of text: String, limit: Int = CurlewError.descriptionBodyLimit) -> String {
        let redacted = redactSecrets(in: String(text.prefix(limit * 8)))
        var line = ""
        line.reserveCapacity(min(redacted.utf8.count, limit + 1))
        var count = 0
        var lastWasSpace = false
        for character in redacted {
            let isSpace = character.isWhitespace
            if isSpace, lastWasSpace { continue }
            if count == limit { return line + "…" }
            line.append(isSpace ? " " : character)
            lastWasSpace = isSpace
            count += 1
        }
        return line
    }

    /// Replaces the values of members whose key contains a secret fragment
    /// (``RequestSummary/defaultSecretKeyFragments``): JSON `"key": "value"` / `"key": 123` and
    /// form or query `key=value`.
    package static func redactSecrets(in text: String, fragments: Set<String> = RequestSummary.defaultSecretKeyFragments) -> String {
        let characters = Array(text)
        var output = ""
        output.reserveCapacity(characters.count)
        var index = 0
        var lastKey = ""
        var keyStart: Int?
        while index < characters.count {
            let character = characters[index]
            if character == "\"" {
                // A quoted string: a JSON key when a colon follows it.
                var end = index + 1
                while end < characters.count, characters[end] != "\"" {
                    end += characters[end] == "\\" ? 2 : 1
                }
                let stringEnd = min(end, characters.count - 1)
                let literal = String(characters[index...stringEnd])
                output += literal
                index = stringEnd + 1
                var look = index
                while look < characters.count, characters[look] == " " { look += 1 }
                if look < characters.count, characters[look] == ":" {
                    lastKey = String(literal.dropFirst().dropLast())
                    output += String(characters[index...look])
                    index = look + 1
                    while index < characters.count, characters[index] == " " { output.append(" "); index += 1 }
                    if isSecret(lastKey, fragments), index < characters.count {
                        index = skipValue(characters, from: index)
                        output += "\"<redacted>\""
                    }
                }
                continue
            }
            if character == "=", let start = keyStart {
                let key = String(characters[start..<index])
                output.append(character)
                index += 1
                if isSecret(key, fragments) {
                    while index < characters.count, !"&\n \"',;".contains(characters[index]) { index += 1 }
                    output += "<redacted>"
                }
                keyStart = nil
                continue
            }
            if character.isLetter || character.isNumber || character == "_" || character == "-" {
                if keyStart == nil { keyStart = index }
            } else {
                keyStart = nil
            }
            output.append(character)
            index += 1
        }
        return output
    }

    private static func isSecret(_ key: String, _ fragments: Set<String>) -> Bool {
        let lowered = key.lowercased()
        return fragments.contains { lowered.contains($0) }
    }

    /// The index after a JSON value starting at `start` (a string, or a scalar up to `,` `}` `]`).
    private static func skipValue(_ characters: [Character], from start: Int) -> Int {
        var index = start
        if characters[index] == "\"" {
            index += 1
            while index < characters.count, characters[index] != "\"" {
                index += characters[index] == "\\" ? 2 : 1
            }
            return min(index + 1, characters.count)
        }
        while index < characters.count, !",}]\n".contains(characters[index]) { index += 1 }
        return index
    }
}

extension CurlewError {
    /// How many characters of the response body ``description`` embeds (on one line, secrets
    /// redacted); the full snippet stays in ``bodySnippet``.
    public static let descriptionBodyLimit = 64
}
