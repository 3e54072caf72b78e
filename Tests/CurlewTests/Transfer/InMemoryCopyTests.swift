@testable import Curlew
@testable import CurlewCore
import Foundation
import Testing

/// A body collected in memory is copied once: from libcurl's buffer into storage reserved from
/// `Content-Length`, which never moves while the body arrives (a growing buffer would copy
/// everything received so far at each reallocation).
@Suite("In-memory bodies: one copy")
struct InMemoryCopyTests {
    @Test func capacityIsReservedFromContentLengthAndTheStorageNeverMoves() {
        let length = 8 * 1024 * 1024
        let sink = BufferedBodySink(maximumSize: 16 * 1024 * 1024)
        sink.expect(contentLength: length)
        let chunk = [UInt8](repeating: 0xA5, count: 16 * 1024)
        var addresses = Set<UInt>()
        var received = 0
        while received < length {
            let decision = chunk.withUnsafeBytes { sink.receive($0) }
            guard case .proceed = decision else {
                Issue.record("the sink refused a chunk")
                return
            }
            received += chunk.count
            let address = sink.body.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
            addresses.insert(address)
        }
        #expect(addresses.count == 1, "the storage moved \(addresses.count - 1) times")
        #expect(sink.body.count == length)
        guard case .data(let content) = sink.content() else {
            Issue.record("not in memory")
            return
        }
        let handedOut = content.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        #expect(addresses == [handedOut], "the caller gets the same storage, not a copy")
    }
}
