import Foundation
import FuzzSupport
@testable import Curlew
@testable import CurlewCore

/// Input: `binary header` NUL `body`, or raw bytes. Reads a disk cache entry (format `CURLEWC2`)
/// both as the raw file (framing, lengths, checksum) and framed with a valid ``CacheChecksum``
/// around the fuzzed header, so the binary header decoder and the RFC 9111 arithmetic on its
/// headers (private and shared, with and without heuristics) are reached; a decoded entry must
/// encode and decode to itself. Also parses the text of a download's resume record.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCacheEntry(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    let raw = start.map { Data(bytes: $0, count: count) } ?? Data()
    _ = DiskEntryFormat.decode(raw)
    _ = DiskEntryFormat.lengths(raw.prefix(DiskEntryFormat.prefixLength))

    let header = input.data(0)
    let body = input.data(1)
    var bytes = DiskEntryFormat.magic
    BinaryWriter.append(UInt64(header.count), to: &bytes)
    BinaryWriter.append(UInt64(body.count), to: &bytes)
    bytes.append(contentsOf: header)
    bytes.append(contentsOf: body)
    let checksum = bytes.withUnsafeBytes { CacheChecksum.hash($0) }
    BinaryWriter.append(checksum, to: &bytes)
    let file = Data(bytes)
    _ = DiskEntryFormat.summary(prefixAndHeader: file.prefix(DiskEntryFormat.prefixLength + header.count), fileLength: file.count)
    if let entry = DiskEntryFormat.decode(file) {
        let facts = HTTPCacheRules.Facts(entry)
        for shared in [false, true] {
            for heuristic in [false, true] { _ = HTTPCacheRules.lifetime(of: entry, facts: facts, shared: shared, heuristic: heuristic) }
            _ = HTTPCacheRules.forbidsStale(facts, shared: shared)
        }
        let age = HTTPCacheRules.currentAge(of: entry, facts: facts, now: Date(timeIntervalSince1970: 1_800_000_000))
        fuzzCheck(age >= 0 || age.isNaN, "a negative current age")
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
