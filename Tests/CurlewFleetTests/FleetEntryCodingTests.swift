import Curlew
@testable import CurlewFleet
import Foundation
import Testing

@Suite("Fleet entry payloads")
struct FleetEntryCodingTests {
    /// An entry with every field set, dates with fractions of a second, non-ASCII text.
    static let full = CacheEntry(
        key: "1|public|GET https://api.example.com/items?q=ä", status: 203,
        headers: [.contentType: "application/json", .eTag: "\"v1\"", .contentLanguage: ""],
        body: Data((0..<300).map { UInt8(truncatingIfNeeded: $0) }), url: "https://api.example.com/items?q=ä",
        requestTime: Date(timeIntervalSinceReferenceDate: 786_123_456.123_456), storedAt: Date(timeIntervalSinceReferenceDate: 786_123_457.5),
        varyNames: ["Accept", "Accept-Language"], varyTag: "accept=json", discardAfter: Date(timeIntervalSinceReferenceDate: 786_209_857.25))

    @Test func anEntryComesBackExactlyAsStored() throws {
        let stored = try FleetEntryCoding.encode(Self.full)
        #expect(stored.payload.first == 0xC1)
        #expect(stored.etag == "\"v1\"")
        #expect(FleetEntryCoding.decode(stored, expectedKey: Self.full.key) == Self.full)

        var bare = Self.full
        bare.headers = [:]
        bare.varyNames = []
        bare.varyTag = nil
        bare.discardAfter = nil
        bare.body = Data()
        #expect(FleetEntryCoding.decode(try FleetEntryCoding.encode(bare), expectedKey: bare.key) == bare)
    }

    @Test func anEntryUnderAnotherKeyIsNotServed() throws {
        let stored = try FleetEntryCoding.encode(Self.full)
        #expect(FleetEntryCoding.decode(stored, expectedKey: "1|public|GET https://api.example.com/other") == nil)
    }

    @Test func everyTruncationOfTheEntryPartIsRejected() throws {
        var bodyless = Self.full
        bodyless.body = Data()
        let stored = try FleetEntryCoding.encode(bodyless)
        // Every proper prefix ends inside the entry part (the body is empty): none decodes.
        for length in 0..<stored.payload.count {
            var cut = stored
            cut.payload = stored.payload.prefix(length)
            #expect(FleetEntryCoding.decode(cut, expectedKey: bodyless.key) == nil, "prefix of \(length) bytes")
        }
    }

    @Test func aPayloadOfTheFirstFormatIsStillRead() throws {
        // A 4-byte big-endian length, the entry without its body as JSON, the body.
        var meta = Self.full
        meta.body = Data()
        let json = try JSONEncoder().encode(meta)
        let length = UInt32(json.count)
        var payload = Data([UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        payload.append(json)
        payload.append(Self.full.body)
        let stored = FleetEntry(key: FleetKeys.describe(Self.full.key).key, payload: payload)
        #expect(FleetEntryCoding.decode(stored, expectedKey: Self.full.key) == Self.full)
    }
}
