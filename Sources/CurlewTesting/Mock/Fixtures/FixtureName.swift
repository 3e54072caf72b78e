import Curlew

/// Checks the parts a fixture file name is made of (a request type name, a scenario), before any
/// path is built: nothing that could name another directory gets through.
enum FixtureName {
    /// Rejects empty text, NUL and other control characters, `/`, `\`, `%` (so percent-encoded
    /// traversal such as `%2e%2e%2f` never reaches the file system), a leading `.` and `..`
    /// anywhere, and over-long names; scenarios also may not be `meta` and no part may end in `.meta`
    /// (the metadata suffix: the body file would be another fixture's metadata file).
    static func check(_ text: String, what: String) throws(CurlewError) {
        func reject(_ why: String) -> CurlewError {
            CurlewError(code: .fixturePathRejected, message: "the fixture \(what) \(printable(text)) is rejected: \(why)")
        }
        guard !text.isEmpty else { throw reject("it is empty") }
        guard text.utf8.count <= 200 else { throw reject("it is longer than 200 bytes") }
        for byte in text.utf8 {
            switch byte {
            case 0: throw reject("it contains NUL")
            case 1..<0x20, 0x7F: throw reject("it contains a control character")
            case UInt8(ascii: "/"), UInt8(ascii: "\\"): throw reject("it contains a path separator")
            case UInt8(ascii: "%"): throw reject("it contains '%' (percent-encoding is not decoded)")
            default: continue
            }
        }
        // On UTF-8 bytes, as the file system sees the name: `hasPrefix`/`hasSuffix` compare
        // Characters, and a combining mark after a leading `.` (`.\u{301}x`), or a prepended
        // concatenation mark before the `.` of `.meta` (`X\u{604}.meta`), makes one Character of
        // the dot and its neighbour, so the Character checks let both through.
        let bytes = text.utf8
        let dot = UInt8(ascii: ".")
        guard bytes.first != dot else { throw reject("it starts with '.'") }
        guard !zip(bytes, bytes.dropFirst()).contains(where: { $0 == dot && $1 == dot }) else { throw reject("it contains '..'") }
        if what == "scenario", bytes.elementsEqual("meta".utf8) { throw reject("\"meta\" names metadata files") }
        // `Name.meta` + `.json`, or scenario `s.meta`, would be another fixture's metadata file.
        if bytes.reversed().starts(with: ".meta".utf8.reversed()) { throw reject("it ends with \".meta\" (that names metadata files)") }
    }

    /// The checked body file name, `Name.json` or `Name.scenario.json`.
    static func file(for name: String, scenario: String?) throws(CurlewError) -> String {
        try check(name, what: "name")
        guard let scenario else { return name + ".json" }
        try check(scenario, what: "scenario")
        return name + "." + scenario + ".json"
    }

    /// The metadata file beside a checked body file: `Name.json` → `Name.meta.json`. Cuts the
    /// `.json` by bytes: `dropLast(5)` counts Characters, and in `X\u{604}.json` the prepended
    /// mark U+0604 and the `.` are one, so it gave `X.meta.json`, another fixture's metadata.
    static func metadataFile(forBody body: String) -> String {
        String(decoding: body.utf8.dropLast(".json".utf8.count), as: UTF8.self) + ".meta.json"
    }

    /// The text with control characters escaped, for messages.
    static func printable(_ text: String) -> String {
        var shown = "\""
        for scalar in text.unicodeScalars {
            shown += scalar.value < 0x20 || scalar.value == 0x7F ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }
        return shown + "\""
    }
}
