import Foundation
import FuzzSupport
@testable import Curlew
@testable import CurlewCore

/// Input: `key path` NUL `JSON body`. Parses the key path, locates it in the body without building
/// values, and checks: the range lies inside the body, and when the whole body is valid JSON the
/// located slice decodes on its own too.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONScanner(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    let pathText = input.text(0)
    let body = input.parts.count > 1 ? input.parts[1...].reduce(into: Data()) { $0.append($1); $0.append(0) }.dropLast() : Data()
    guard let path = JSONKeyPath(pathText) else { return 0 }
    _ = path.description
    _ = JSONKeyPath(path.description)
    _ = JSONKeyPath.join(pathText, pathText)
    // A slice with a non-zero start index, as a narrowed envelope payload is.
    for data in [Data(body), Data([0x20]) + body, (Data([0x20]) + body).dropFirst()] {
        guard let range = try? JSONSubtreeScanner.locate(path, in: data) else { continue }
        fuzzCheck(range.lowerBound >= 0 && range.upperBound <= data.count, "range \(range) outside \(data.count) bytes")
        let slice = data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)]
        // Only for UTF-8 JSON: Foundation's decoder also reads UTF-16 and UTF-32 (it guesses the
        // encoding from where the first bytes are zero), which the scanner, like RFC 8259, does
        // not: `[\0]\0-` is `[]` to Foundation. UTF-8 JSON text never holds a zero byte.
        if !data.contains(0), (try? JSONValue(jsonData: data)) != nil {
            fuzzCheck((try? JSONValue(jsonData: slice)) != nil, "the located value of valid JSON does not decode")
        }
    }
    let raw = RawResponse(status: .ok, body: body, url: "https://example.com/")
    _ = try? raw.json(at: pathText)
    _ = try? raw.narrowed(to: pathText)
    return 0
}

runFuzzer(fuzzJSONScanner)
