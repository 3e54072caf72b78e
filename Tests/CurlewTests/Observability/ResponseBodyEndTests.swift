@testable import Curlew
@testable import CurlewCore
import Foundation
import Synchronization
import Testing

/// ``ResponseBodyBuffer``'s end observers: told exactly once, before a reader can see the end,
/// whichever of finish, failure, cancel or the reader going away comes first.
@Suite("Response body end observers")
struct ResponseBodyEndTests {
    /// Counts observer calls by outcome.
    final class Ends: Sendable {
        private let seen = Mutex<[String]>([])
        func record(_ end: ResponseBodyEnd) {
            let name: String
            switch end {
            case .finished: name = "finished"
            case .failed: name = "failed"
            case .cancelled: name = "cancelled"
            }
            seen.withLock { $0.append(name) }
        }
        var all: [String] { seen.withLock { $0 } }
    }

    @Test func aFinishedBodyTellsEveryObserverOnceWithItsMetricsBeforeTheReaderSeesTheEnd() async throws {
        let buffer = ResponseBodyBuffer(highWaterMark: 100, onResume: {}, onCancel: {})
        let ends = Ends()
        let stream = ResponseBodyStream(buffer: buffer)
        stream.whenEnded { ends.record($0) }
        stream.whenEnded { ends.record($0) }
        let reader = Task { try await stream.collect(upTo: 1000) }
        _ = Data("abc".utf8).withUnsafeBytes { buffer.offer($0) }
        buffer.finish(nil, metrics: TransferMetrics(bytesReceived: 42))
        buffer.finish(CurlewError(code: .transportFailure, message: "late"))
        #expect(try await reader.value == Data("abc".utf8))
        buffer.cancel()
        #expect(ends.all == ["finished", "finished"])
        #expect(stream.metrics?.bytesReceived == 42)
        stream.whenEnded { ends.record($0) }
        #expect(ends.all == ["finished", "finished", "finished"], "an observer added after the end is told at once")
    }

    @Test func aFailedBodyReportsItsErrorAndNoFinalMetrics() {
        let buffer = ResponseBodyBuffer(highWaterMark: 100, onResume: {}, onCancel: {})
        let ends = Ends()
        buffer.whenEnded { ends.record($0) }
        var error = CurlewError(code: .transportFailure, message: "reset")
        error.metrics = TransferMetrics(bytesReceived: 7)
        buffer.finish(error)
        #expect(ends.all == ["failed"])
        #expect(buffer.finalMetrics == nil)
    }

    @Test func aCancelledOrAbandonedBodyStopsTheTransferAndIsToldOnceWhenTheTransportEndsIt() {
        let stops = Mutex(0)
        let ends = Ends()
        var measured = CurlewError(code: .cancelled, message: "the transfer was cancelled")
        measured.metrics = TransferMetrics(bytesReceived: 1234)
        do {
            let buffer = ResponseBodyBuffer(highWaterMark: 100, onResume: {}, onCancel: { stops.withLock { $0 += 1 } })
            buffer.whenEnded { ends.record($0) }
            buffer.cancel()
            buffer.cancel()
            #expect(ends.all.isEmpty, "told when the transport has stopped the transfer, with what it measured")
            buffer.finish(measured)
            buffer.whenEnded { end in #expect(end.metrics?.bytesReceived == 1234) }
        }
        do {
            let buffer = ResponseBodyBuffer(highWaterMark: 100, onResume: {}, onCancel: { stops.withLock { $0 += 1 } })
            buffer.whenEnded { ends.record($0) }
            _ = ResponseBodyStream(buffer: buffer)  // the only copy goes at once
            #expect(stops.withLock { $0 } == 2)
            // The transport finished the transfer meanwhile: still a cancel, with its metrics.
            buffer.finish(nil, metrics: TransferMetrics(bytesReceived: 99))
            buffer.whenEnded { end in #expect(end.metrics?.bytesReceived == 99) }
        }
        #expect(ends.all == ["cancelled", "cancelled"])
        #expect(stops.withLock { $0 } == 2)
    }

    @Test func racingFinishAndCancelTellTheObserverExactlyOnce() async {
        let ends = Ends()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<500 {
                let buffer = ResponseBodyBuffer(highWaterMark: 100, onResume: {}, onCancel: {})
                buffer.whenEnded { ends.record($0) }
                group.addTask {
                    buffer.cancel()
                    // What the transport does when asked to stop (a no-op after the finish).
                    buffer.finish(CurlewError(code: .cancelled, message: "the transfer was cancelled"))
                }
                group.addTask { buffer.finish(nil) }
            }
        }
        #expect(ends.all.count == 500)
    }
}
