import Testing

@testable import Curlew
@testable import CurlewCore

/// The bitmask byte classes against their definitions (RFC 3986), for all 256 byte values.
@Suite("Byte classes")
struct ByteClassTests {
    private static let letters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
    private static let unreserved = letters.union("-._~".utf8)
    private static let pathAllowed = unreserved.union("!$&'()*+,;=:@/%?".utf8)

    @Test func unreservedBytes() {
        for byte in UInt8.min...UInt8.max {
            #expect(PercentEncoding.isUnreserved(byte) == Self.unreserved.contains(byte), "byte \(byte)")
        }
    }

    @Test func bytesAPathKeepsAsTheyAre() {
        for byte in UInt8.min...UInt8.max {
            #expect(PercentEncoding.isPathAllowed(byte) == Self.pathAllowed.contains(byte), "byte \(byte)")
        }
    }
}
