import Foundation
import FuzzSupport
import HTTPTypes
@testable import Curlew
@testable import CurlewCore

/// Input: header lines as libcurl hands them over (each ending in LF). Feeds them to the engine
/// side of `ResponseHeadParser` and parses the block into fields on the caller side; checks that
/// no field value keeps a CR, LF or NUL, that no name is empty, and that the lazy header lookup
/// (`RawHeaderBlock`'s scan) agrees with the parsed fields.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponseHead(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    var parser = ResponseHeadParser()
    var lineStart = 0
    for index in 0..<count where bytes[index] == UInt8(ascii: "\n") || index == count - 1 {
        parser.consume(line: UnsafeRawBufferPointer(rebasing: bytes[lineStart...index]))
        lineStart = index + 1
    }
    fuzzCheck(parser.bytesSeen == count, "bytesSeen \(parser.bytesSeen) != \(count)")
    let fields = ResponseHeadParser.fields(of: parser.block)
    for field in fields {
        fuzzCheck(!field.name.rawName.isEmpty, "empty field name")
        fuzzCheck(!field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }), "CR/LF/NUL in \(field.name): \(field.value.debugDescription)")
    }
    // The lazy lookup a response's headers get before anyone asks for `HTTPFields` (a scan of the
    // raw block) must say what the parsed fields say, for every name there and a few common ones.
    var names = Set(fields.map(\.name))
    names.formUnion([.contentType, .contentLength, .setCookie, .location, .eTag, .cacheControl])
    for name in names {
        let scanned = RawHeaderBlock(parser.block)[name]
        fuzzCheck(scanned == fields[name], "lookup of \(name): \(String(describing: scanned)) but the fields hold \(String(describing: fields[name]))")
    }
    _ = ResponseHeadParser.fields(of: Array(bytes))
    return 0
}

runFuzzer(fuzzResponseHead)
