import Crypto
import Foundation
import FuzzSupport
@testable import Curlew

/// Input: `header JSON` NUL `body`, or raw bytes. Reads a disk cache entry both as the raw file
/// (framing, lengths, checksum) and framed with a valid checksum around the fuzzed header, so the
/// header decoder and the RFC 9111 arithmetic on its headers are reached; a decoded entry must
/// encode and decode to itself. Also parses the text of a download's resume record.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCacheEntry(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    let raw = start.map { Data(bytes: $0, count: count) } ?? Data()
    _ = DiskEntryFormat.decode(raw)
    _ = DiskEntryFormat.lengths(raw.prefix(DiskEntryFormat.prefixLength))

    let header = input.data(0)
    let body = input.data(1)
    var file = Data(DiskEntryFormat.magic)
    for value in [UInt64(header.count), UInt64(body.count)] {
        for shift in stride(from: 0, to: 64, by: 8) { file.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
    file.append(header)
    file.append(body)
    file.append(contentsOf: SHA256.hash(data: file))
    if let entry = DiskEntryFormat.decode(file) {
        _ = HTTPCacheRules.lifetime(of: entry)
        _ = HTTPCacheRules.mustRevalidate(entry)
        _ = HTTPCacheRules.currentAge(of: entry, now: Date(timeIntervalSince1970: 1_800_000_000))
        _ = HTTPCacheRules.directives(entry.joinedHeader("Cache-Control"))
        _ = entry.size
        if let encoded = try? DiskEntryFormat.encode(entry) {
            let again = DiskEntryFormat.decode(encoded)
            fuzzCheck(again == entry, "a decoded entry does not survive encode/decode")
        }
    }
    let text = String(decoding: raw, as: UTF8.self)
    _ = HTTPCacheRules.directives(text)
    if let record = ResumeRecord(text: text) {
        fuzzCheck(ResumeRecord(text: record.text) == record, "a resume record does not survive text/parse")
    }
    return 0
}

runFuzzer(fuzzCacheEntry)
