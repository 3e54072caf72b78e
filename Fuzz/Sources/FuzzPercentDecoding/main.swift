import Foundation
import FuzzSupport
@testable import Curlew
@testable import CurlewCore

/// Input: any text. Percent-decodes it the ways Curlew does (RFC 8187 `filename*`, query and form
/// pairs, a download's file name from its URL) and checks that encoding then decoding gives the
/// text back.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPercentDecoding(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let text = FuzzInput.text(start, count)
    _ = ContentDisposition.decodeExtended(text)
    _ = QueryString.items(of: text)
    _ = QueryString.pairs(text, plusIsSpace: true)
    _ = QueryString.pairs(text, plusIsSpace: false)
    let name = APIClient.fileName(fromURL: text)
    fuzzCheck(!name.isEmpty && !name.contains("/"), "file name \(name.debugDescription) from a URL")
    // Round trips: what Curlew encodes, it decodes to the same text.
    if !text.isEmpty {
        let encoded = PercentEncoding.queryComponent(text)
        fuzzCheck(encoded.utf8.allSatisfy { PercentEncoding.isUnreserved($0) || $0 == UInt8(ascii: "%") }, "encoded \(encoded)")
        let pairs = QueryString.pairs(encoded + "=" + encoded, plusIsSpace: false)
        fuzzCheck(pairs.count == 1 && pairs[0].name == text && pairs[0].value == text, "query round trip of \(text.debugDescription): \(pairs)")
        let form = QueryString.pairs(PercentEncoding.formEncoded([URLQueryItem(name: text, value: text)]), plusIsSpace: true)
        fuzzCheck(form.count == 1 && form[0].name == text && form[0].value == text, "form round trip of \(text.debugDescription): \(form)")
        let extended = ContentDisposition.decodeExtended("UTF-8''" + encoded)
        fuzzCheck(extended == text, "filename* round trip of \(text.debugDescription): \(String(describing: extended))")
    }
    _ = PercentEncoding.path(text)
    return 0
}

runFuzzer(fuzzPercentDecoding)
