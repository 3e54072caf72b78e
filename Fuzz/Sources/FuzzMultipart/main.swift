import Foundation
import FuzzSupport
@testable import Curlew

/// Input: `name` NUL `file name` NUL `content type` NUL `boundary` NUL `value`. Encodes a form
/// with a field and a file part; when the encoder accepts it, checks each part's header block is
/// exactly the lines Curlew writes (no CR or LF smuggled in through a name), the announced length
/// is the encoded length, and the boundary only appears where it delimits.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipart(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    var form = MultipartForm(boundary: input.parts.count > 3 ? input.text(3) : nil)
    form.append(field: input.text(0), value: input.text(4))
    form.append(data: input.data(4), name: input.text(0), fileName: input.text(1), contentType: input.parts.count > 2 ? input.text(2) : nil)
    _ = MultipartPart.defaultContentType(forFileName: input.text(1))
    guard let encoder = try? MultipartEncoder(form) else { return 0 }
    var body = Data()
    for part in encoder.parts {
        let head = String(decoding: part.head, as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        // "--boundary", Content-Disposition, [Content-Type], "", "" (the head ends with a blank line).
        fuzzCheck((lines.count == 4 || lines.count == 5) && lines.suffix(2).allSatisfy(\.isEmpty), "a part head of \(lines.count) lines: \(head.debugDescription)")
        fuzzCheck(lines[1].hasPrefix("Content-Disposition: form-data; name=\""), "second line \(lines[1].debugDescription)")
        fuzzCheck(lines.count == 4 || lines[2].hasPrefix("Content-Type: "), "third line \(lines[2].debugDescription)")
        fuzzCheck(lines[0] == "--" + form.boundary, "head starts with \(lines[0].debugDescription)")
        fuzzCheck(!part.head.contains(0), "NUL in a part head")
        fuzzCheck(!lines.contains { $0.contains("\r") || $0.contains("\n") }, "bare CR/LF in \(head.debugDescription)")
        body.append(part.head)
        if case .data(let data) = part.content { body.append(data) }
        body.append(contentsOf: Array("\r\n".utf8))
    }
    body.append(encoder.closing)
    fuzzCheck(Int64(body.count) == encoder.length, "announced \(encoder.length), encoded \(body.count)")
    return 0
}

runFuzzer(fuzzMultipart)
