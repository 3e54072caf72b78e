import Foundation
import CurlewTesting
import FuzzSupport
@testable import Curlew
@testable import CurlewCore

/// Input: `name` NUL `file name` NUL `content type` NUL `boundary` NUL `value`. Encodes a form
/// with a field and a file part; when the encoder accepts it, checks each part's header block is
/// exactly the lines Curlew writes (no CR or LF smuggled in through a name), the announced length
/// is the encoded length, and CurlewTesting's reader (`RecordedMultipartPart.parts`) reads back
/// the names, file names, content types and bytes (when no name holds a `%`, which RFC 7578's
/// escaping cannot tell from an escape, and no value holds the delimiter). The reader also gets
/// the raw input as a body.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipart(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    let boundaryText = input.parts.count > 3 ? input.text(3) : "b"
    let rawParts = try? RecordedMultipartPart.parts(of: input.data(4), contentType: "multipart/form-data; boundary=\(boundaryText)")
    _ = rawParts?.map(\.text)
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
        // Bytes, not Characters: a name starting with a combining mark joins the opening quote.
        fuzzCheck(lines[1].utf8.starts(with: "Content-Disposition: form-data; name=\"".utf8), "second line \(lines[1].debugDescription)")
        fuzzCheck(lines.count == 4 || lines[2].utf8.starts(with: "Content-Type: ".utf8), "third line \(lines[2].debugDescription)")
        fuzzCheck(lines[0] == "--" + form.boundary, "head starts with \(lines[0].debugDescription)")
        fuzzCheck(!part.head.contains(0), "NUL in a part head")
        fuzzCheck(!lines.contains { $0.contains("\r") || $0.contains("\n") }, "bare CR/LF in \(head.debugDescription)")
        body.append(part.head)
        if case .data(let data) = part.content { body.append(data) }
        body.append(contentsOf: Array("\r\n".utf8))
    }
    body.append(encoder.closing)
    fuzzCheck(Int64(body.count) == encoder.length, "announced \(encoder.length), encoded \(body.count)")
    let name = input.text(0), fileName = input.text(1), value = input.data(4)
    let delimiter = Data("\r\n--\(form.boundary)".utf8)
    guard !name.contains("%"), !fileName.contains("%"), value.range(of: delimiter) == nil, value.range(of: delimiter.dropFirst(2)) == nil else { return 0 }
    let read: [RecordedMultipartPart]
    do {
        read = try RecordedMultipartPart.parts(of: body, contentType: form.contentType)
    } catch {
        fuzzCheck(false, "the reader refused what the encoder wrote: \(error) in \(String(decoding: body, as: UTF8.self).debugDescription)")
        return 0
    }
    fuzzCheck(read.count == 2, "\(read.count) parts read back")
    fuzzCheck(read.allSatisfy { $0.name == name }, "names read back \(read.map(\.name)) for \(name.debugDescription)")
    fuzzCheck(read[0].filename == nil && read[1].filename == fileName, "file name read back \(String(describing: read[1].filename)) for \(fileName.debugDescription)")
    fuzzCheck(read[1].body == value, "bytes read back differ")
    let type = form.parts[1].contentType?.trimmingCharacters(in: .whitespaces)
    fuzzCheck(read[1].contentType == type, "content type read back \(String(describing: read[1].contentType)) for \(String(describing: type))")
    return 0
}

runFuzzer(fuzzMultipart)
