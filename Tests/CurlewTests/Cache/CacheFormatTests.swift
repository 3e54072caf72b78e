@testable import Curlew
@testable import CurlewCore
import Foundation
import Testing

/// The hit path's own parsers: the fast HTTP date reader agrees with the general one, and the
/// disk entry checksum notices every single-bit flip.
@Suite("Cache date parser and entry checksum")
struct CacheFormatTests {
    @Test func theFastDateParserAgreesWithServerClockAndFallsBack() {
        var date = Date(timeIntervalSince1970: 0)
        for _ in 0..<400 {
            let text = httpDate(date)
            #expect(CacheDateParser.parse(text) == ServerClock.parseHTTPDate(text), "\(text)")
            #expect(CacheDateParser.parse(text) == Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
            date = date.addingTimeInterval(7_654_321.5)
        }
        #expect(CacheDateParser.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        for bad in [
            "Sun, 06 Nov 1994 24:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nox 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 0x Nov 1994 08:49:37 GMT", "",
        ] {
            #expect(CacheDateParser.parse(bad) == nil, "\(bad)")
        }
        // The obsolete forms a recipient must still accept (RFC 9110 §5.6.7): the general parser reads them.
        #expect(CacheDateParser.parse("Sunday, 06-Nov-94 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(CacheDateParser.parse("Sun Nov  6 08:49:37 1994") == Date(timeIntervalSince1970: 784_111_777))
        // Not 29 bytes: the general parser decides (a one-digit day).
        #expect(CacheDateParser.parse("Sun, 6 Nov 1994 08:49:37 GMT") == ServerClock.parseHTTPDate("Sun, 6 Nov 1994 08:49:37 GMT"))
    }

    @Test func everySingleBitFlipOfAnEntryIsDamage() throws {
        let entry = CacheEntry(
            key: "1|public|GET http://a/1", status: 200, headers: [.eTag: "\"x\""], body: Data("hello, cache".utf8),
            url: "http://a/1", requestTime: Date(timeIntervalSince1970: 1_000), storedAt: Date(timeIntervalSince1970: 1_001),
            varyNames: ["accept-language"], varyTag: "tag", discardAfter: Date(timeIntervalSince1970: 9_999))
        let file = try DiskEntryFormat.encode(entry)
        #expect(DiskEntryFormat.decode(file) == entry)
        for index in 0..<file.count {
            for bit in 0..<8 {
                var damaged = file
                damaged[index] ^= UInt8(1 << bit)
                #expect(DiskEntryFormat.decode(damaged) == nil, "byte \(index) bit \(bit)")
            }
        }
        for length in 0..<file.count { #expect(DiskEntryFormat.decode(file.prefix(length)) == nil) }
    }
}
