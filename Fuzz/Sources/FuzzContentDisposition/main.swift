import Foundation
import FuzzSupport
@testable import Curlew
@testable import CurlewCore

/// Input: a `Content-Disposition` (and `Content-Range`) header value. Checks the suggested file
/// name is one safe path component: not empty, no separator, no control character, no leading
/// dot or space, at most `maximumLength` UTF-8 bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContentDisposition(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let text = FuzzInput.text(start, count)
    _ = ContentDisposition.parameters(text)
    for candidate in [ContentDisposition.suggestedFileName(text), ContentDisposition.sanitised(text)] {
        guard let name = candidate else { continue }
        fuzzCheck(!name.isEmpty, "empty name")
        fuzzCheck(name.utf8.count <= ContentDisposition.maximumLength, "name of \(name.utf8.count) bytes")
        fuzzCheck(!name.contains("/") && !name.contains("\\"), "separator in \(name.debugDescription)")
        fuzzCheck(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character in \(name.debugDescription)")
        // Scalars, not Characters: `.` followed by a combining mark is one Character.
        fuzzCheck(name.unicodeScalars.first != "." && name.unicodeScalars.first != " ", "leading dot or space in \(name.debugDescription)")
        fuzzCheck(name != "." && name != "..", "dot name")
    }
    if let range = ContentRange(text) {
        if let first = range.first, let last = range.last { fuzzCheck(first >= 0 && last >= first, "range \(first)-\(last)") }
        if let complete = range.complete, let last = range.last { fuzzCheck(last < complete, "last \(last) >= complete \(complete)") }
    }
    return 0
}

runFuzzer(fuzzContentDisposition)
