@testable import Curlew
@testable import CurlewCore
import Foundation
import Testing

/// A small deterministic generator (SplitMix64) for the random event orders.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Transfer state machine and body hand-offs without I/O")
struct TransferStateMachineTests {
    typealias Machine = TransferStateMachine<Caller>

    /// Stands in for the continuation: a value the actions hand back.
    struct Caller: Equatable {
        var id: Int
    }

    /// A sink that records what it is told.
    final class RecordingSink: ResponseBodySink {
        var acceptsMore = true
        var failures = 0
        func expect(contentLength: Int?) {}
        func receive(_ bytes: UnsafeRawBufferPointer) -> SinkDecision { .proceed }
        func finish() -> CurlewError? { nil }
        func content() -> ResponseContent { .data(Data()) }
        func fail(_ error: CurlewError) { failures += 1 }
    }

    static func machine(resumesAtHead: Bool, sink: RecordingSink = RecordingSink()) -> Machine {
        Machine(caller: Caller(id: 1), sink: sink, source: nil, resumesAtHead: resumesAtHead)
    }

    static let error = CurlewError(code: .transportFailure, message: "boom", request: summary)

    @Test func collectResumesTheCallerOnlyAtTheEnd() {
        var machine = Self.machine(resumesAtHead: false)
        let attached = machine.attach()
        #expect(attached)
        let attachedAgain = machine.attach()
        #expect(attachedAgain == false, "attached once")
        guard case .deliverHead = machine.headComplete(isFollowedRedirect: false) else {
            Issue.record("a collecting transfer delivers the head to its sink")
            return
        }
        guard case .none = machine.headComplete(isFollowedRedirect: false) else {
            Issue.record("the head completes once")
            return
        }
        guard case .deliver = machine.bodyChunk(count: 10) else {
            Issue.record("body bytes go to the sink")
            return
        }
        guard case .succeed(let caller, _, reportHead: false) = machine.transferEnded(error: nil) else {
            Issue.record("the caller is resumed at the end, the head already reported")
            return
        }
        #expect(caller == Caller(id: 1))
        #expect(machine.isEnded)
        guard case .none = machine.transferEnded(error: nil), case .none = machine.fail(Self.error) else {
            Issue.record("a late completion or failure (a cancel racing completion) is ignored")
            return
        }
    }

    @Test func responseWithoutBodyReportsItsHeadAtCompletion() {
        for resumesAtHead in [false, true] {
            var machine = Self.machine(resumesAtHead: resumesAtHead)
            _ = machine.attach()
            guard case .succeed(_, _, reportHead: true) = machine.transferEnded(error: nil) else {
                Issue.record("a bodiless response resumes the caller with the head reported now")
                return
            }
        }
    }

    @Test func streamResumesAtTheHeadThenEndsTheStream() {
        var machine = Self.machine(resumesAtHead: true)
        _ = machine.attach()
        guard case .resumeCallerWithStream(let caller, _) = machine.headComplete(isFollowedRedirect: false) else {
            Issue.record("a stream resumes its caller at the head")
            return
        }
        #expect(caller.id == 1)
        guard case .endStream(_, wasPaused: false) = machine.transferEnded(error: nil) else {
            Issue.record("the end goes to the stream, not to the caller")
            return
        }
    }

    @Test func failureGoesToTheCallerBeforeTheHeadAndToTheStreamAfter() {
        var early = Self.machine(resumesAtHead: true)
        guard case .failCaller(_, _, let rejection) = early.fail(Self.error) else {
            Issue.record("rejected before it was attached: the caller gets the error")
            return
        }
        #expect(rejection.message == "boom")
        let attachedAfterRejection = early.attach()
        #expect(attachedAfterRejection == false)

        var collecting = Self.machine(resumesAtHead: false)
        _ = collecting.attach()
        _ = collecting.headComplete(isFollowedRedirect: false)
        guard case .failCaller = collecting.transferEnded(error: Self.error) else {
            Issue.record("a collecting transfer's libcurl error goes to the caller")
            return
        }

        var streaming = Self.machine(resumesAtHead: true)
        _ = streaming.attach()
        _ = streaming.headComplete(isFollowedRedirect: false)
        let paused = streaming.receivePaused()
        #expect(paused)
        guard case .failStream(_, _, wasPaused: true) = streaming.fail(Self.error) else {
            Issue.record("after the head the stream gets the error")
            return
        }
        #expect(streaming.isEnded)
        #expect(streaming.isPaused == false)
    }

    @Test func theFirstAbortReasonWinsOverLibcurlsError() {
        var machine = Self.machine(resumesAtHead: false)
        _ = machine.attach()
        machine.abort(CurlewError(code: .protocolError, message: "bad framing", request: Self.summary))
        machine.abort(CurlewError(code: .bodyTooLarge, message: "later", request: Self.summary))
        guard case .failCaller(_, _, let error) = machine.transferEnded(error: Self.error) else {
            Issue.record("an aborted transfer fails")
            return
        }
        #expect(error.code == .protocolError)
        #expect(error.message == "bad framing")
    }

    @Test func aFollowedRedirectsBodyIsDroppedUnreadAndTheCallerGetsTheHead() {
        for resumesAtHead in [false, true] {
            var machine = Self.machine(resumesAtHead: resumesAtHead)
            _ = machine.attach()
            guard case .skipHop = machine.headComplete(isFollowedRedirect: true) else {
                Issue.record("a followed redirect is skipped, whatever the disposition")
                return
            }
            guard case .discard = machine.bodyChunk(count: Machine.hopBodyLimit) else {
                Issue.record("up to the limit, the hop's body is read and dropped")
                return
            }
            guard case .stop = machine.bodyChunk(count: 1) else {
                Issue.record("beyond the limit, the hop's transfer stops")
                return
            }
            // Stopping makes libcurl report a write error: the hop still succeeds.
            guard case .succeed(_, _, reportHead: false) = machine.transferEnded(error: Self.error) else {
                Issue.record("a hop ends with its head for the redirect step, never as the stream's or a failure")
                return
            }
        }
    }

    @Test func pauseAndResumeTrackEachDirection() {
        let sink = RecordingSink()
        var machine = Self.machine(resumesAtHead: true, sink: sink)
        _ = machine.attach()
        machine.sendPausedForData()
        #expect(machine.isPaused)
        _ = machine.headComplete(isFollowedRedirect: false)
        let paused = machine.receivePaused()
        #expect(paused)
        let pausedAgain = machine.receivePaused()
        #expect(pausedAgain == false, "already paused")
        #expect(machine.receivePauses == 1)
        sink.acceptsMore = false
        let sendReady = machine.unpause()
        #expect(sendReady?.0 == .init(receive: true, send: false), "the send side (no source: always ready) resumes")
        #expect(sendReady?.resumedReceive == false)
        let nothingReady = machine.unpause()
        #expect(nothingReady == nil, "nothing ready: no curl_easy_pause call")
        sink.acceptsMore = true
        let receiveReady = machine.unpause()
        #expect(receiveReady?.0 == .init(receive: false, send: false))
        #expect(receiveReady?.resumedReceive == true)
        #expect(!machine.isPaused)
        let alreadyRunning = machine.unpause()
        #expect(alreadyRunning == nil)
        _ = machine.transferEnded(error: nil)
        machine.sendPausedForData()
        #expect(!machine.isPaused, "nothing pauses a finished transfer")
    }

    @Test func collectingSinksNeverPause() {
        var machine = Self.machine(resumesAtHead: false)
        _ = machine.attach()
        _ = machine.headComplete(isFollowedRedirect: false)
        let paused = machine.receivePaused()
        #expect(paused == false)
        #expect(!machine.isPaused)
    }

    /// Random event orders, 20,000 of them: the caller is resumed exactly once (by a `succeed`,
    /// a `failCaller` or a stream's head) however the events come, and every end reaches the
    /// sink or the caller once.
    @Test func randomEventOrdersResumeTheCallerExactlyOnce() {
        var generator = SplitMix64(seed: 0x5EED_C0DE)
        for round in 0..<20_000 {
            let sink = RecordingSink()
            let resumesAtHead = generator.next() & 1 == 0
            var machine = Self.machine(resumesAtHead: resumesAtHead, sink: sink)
            var resumes = 0
            var ends = 0
            let steps = Int(generator.next() % 12)
            func count(_ action: Machine.EndAction) {
                switch action {
                case .none: break
                case .succeed, .failCaller: resumes += 1; ends += 1
                case .endStream, .failStream: ends += 1
                }
            }
            for _ in 0..<steps {
                switch generator.next() % 10 {
                case 0: _ = machine.attach()
                case 1, 2:
                    if case .resumeCallerWithStream = machine.headComplete(isFollowedRedirect: generator.next() % 4 == 0) { resumes += 1 }
                case 3: _ = machine.bodyChunk(count: Int(generator.next() % 4096))
                case 4: _ = machine.receivePaused()
                case 5: machine.sendPausedForData()
                case 6: _ = machine.unpause()
                case 7: machine.abort(Self.error)
                case 8: count(machine.transferEnded(error: generator.next() & 1 == 0 ? nil : Self.error))
                default: count(machine.fail(Self.error))
                }
            }
            // The engine always ends a transfer: by libcurl's result, a cancel or shutdown.
            count(machine.fail(Self.error))
            #expect(resumes == 1, "round \(round): the caller was resumed \(resumes) times")
            #expect(ends == 1, "round \(round): the transfer ended \(ends) times")
            #expect(machine.isEnded)
            if resumes != 1 || ends != 1 { return }
        }
    }

    // MARK: Response body buffer

    @Test func bufferPausesAboveTheHighWaterMark() {
        var state = ResponseBodyBufferState(highWaterMark: 100)
        let chunk = Data(repeating: 1, count: 60)
        guard case .accepted(nil, _) = state.offer(count: 60, { chunk }) else {
            Issue.record("first chunk must be queued")
            return
        }
        guard case .accepted(nil, _) = state.offer(count: 60, { chunk }) else {
            Issue.record("below the mark: queued")
            return
        }
        #expect(state.bufferedBytes == 120)
        #expect(state.chunks.count == 1, "small chunks coalesce")
        guard case .pause = state.offer(count: 60, { chunk }) else {
            Issue.record("above the mark: pause")
            return
        }
        #expect(state.producerPaused)
    }

    @Test func bufferResumesTheProducerOnceTheReaderIsDownToHalfTheMark() async throws {
        let resumes = ByteCounter()
        let buffer = ResponseBodyBuffer(highWaterMark: 100, onResume: { resumes.add(1) }, onCancel: {})
        let chunk = [UInt8](repeating: 1, count: 60)
        let offers = chunk.withUnsafeBytes { bytes in [buffer.offer(bytes), buffer.offer(bytes), buffer.offer(bytes)] }
        #expect(offers == [true, true, false])
        #expect(!buffer.acceptsMore)
        let first = try await buffer.next()
        #expect(first?.count == 120, "two chunks coalesced")
        #expect(resumes.value == 1)
        #expect(buffer.acceptsMore)
        buffer.finish(nil)
        let end = try await buffer.next()
        #expect(end == nil)
    }

    @Test func bufferEndsAfterTheQueuedChunksAndCancelsOnlyUnfinishedTransfers() {
        var state = ResponseBodyBufferState(highWaterMark: 100)
        _ = state.offer(count: 3) { Data([1, 2, 3]) }
        let waiter = state.finish(nil)
        #expect(waiter == nil, "no reader waiting")
        let stopsAfterEnd = state.consumerGone()
        #expect(stopsAfterEnd == false, "the body ended: nothing to stop")

        var unfinished = ResponseBodyBufferState(highWaterMark: 100)
        _ = unfinished.offer(count: 3) { Data([1, 2, 3]) }
        let stopsMidBody = unfinished.consumerGone()
        #expect(stopsMidBody, "a reader leaving mid-body stops the transfer")
        guard case .abort = unfinished.offer(count: 1, { Data([4]) }) else {
            Issue.record("after cancel the producer aborts")
            return
        }
    }

    @Test func aBodyThatEndedBeforeAnyReadIsTakenWholeOnce() {
        var state = ResponseBodyBufferState(highWaterMark: 1 << 20)
        _ = state.offer(count: 3) { Data([1, 2, 3]) }
        #expect(state.takeWholeIfEnded() == nil, "not ended yet: read it chunk by chunk")
        _ = state.offer(count: 2) { Data([4, 5]) }
        _ = state.finish(nil)
        #expect(state.takeWholeIfEnded() == Data([1, 2, 3, 4, 5]))
        #expect(state.bufferedBytes == 0)
        #expect(state.takeWholeIfEnded() == nil, "taken once")
        #expect(state.consumerGone() == false, "the body ended: nothing to stop")

        var failed = ResponseBodyBufferState(highWaterMark: 1 << 20)
        _ = failed.offer(count: 1) { Data([1]) }
        _ = failed.finish(CurlewError(code: .idleTimeout, message: "stalled"))
        #expect(failed.takeWholeIfEnded() == nil, "a failed body is read chunk by chunk, to its error")

        var empty = ResponseBodyBufferState(highWaterMark: 1 << 20)
        _ = empty.finish(nil)
        #expect(empty.takeWholeIfEnded() == Data())
    }

    // MARK: Request body pump

    @Test func pumpHandsOverBytesAndPausesTheReaderWhenEmpty() {
        var state = RequestBodyPumpState(declaredLength: 5, capacity: 4, request: Self.summary)
        var buffer = [UInt8](repeating: 0, count: 3)
        let first = buffer.withUnsafeMutableBytes { state.read(into: $0) }
        guard case .pause = first.0 else {
            Issue.record("empty: pause")
            return
        }
        #expect(state.readerPaused)
        let appended = state.append(Data([1, 2, 3, 4, 5]))
        #expect(appended.keepGoing && appended.wakeReader)
        #expect(!state.readerPaused)
        let second = buffer.withUnsafeMutableBytes { state.read(into: $0) }
        guard case .bytes(3) = second.0 else {
            Issue.record("three bytes fit")
            return
        }
        #expect(buffer == [1, 2, 3])
        let wakesReader = state.end(nil)
        #expect(wakesReader == false, "the reader is not paused")
        let third = buffer.withUnsafeMutableBytes { state.read(into: $0) }
        guard case .bytes(2) = third.0 else {
            Issue.record("the rest")
            return
        }
        #expect(buffer.prefix(2) == [4, 5])
        let fourth = buffer.withUnsafeMutableBytes { state.read(into: $0) }
        guard case .bytes(0) = fourth.0 else {
            Issue.record("end of body")
            return
        }
    }

    @Test func pumpFailsShortLongAndThrowingBodies() {
        var short = RequestBodyPumpState(declaredLength: 10, capacity: 100, request: Self.summary)
        _ = short.append(Data([1, 2]))
        _ = short.end(nil)
        #expect(Self.readError(&short)?.code == .bodyStreamFailed)

        var long = RequestBodyPumpState(declaredLength: 1, capacity: 100, request: Self.summary)
        let appended = long.append(Data([1, 2]))
        #expect(appended.keepGoing == false)
        #expect(Self.readError(&long)?.code == .bodyStreamFailed)

        var throwing = RequestBodyPumpState(declaredLength: nil, capacity: 100, request: Self.summary)
        _ = throwing.end(CocoaError(.fileReadCorruptFile))
        let error = Self.readError(&throwing)
        #expect(error?.code == .bodyStreamFailed)
        #expect(error?.underlying is CocoaError)
    }

    static let summary = RequestSummary(method: .post, url: "http://127.0.0.1/upload")

    /// Reads until the pump answers with an abort; returns its error.
    static func readError(_ state: inout RequestBodyPumpState) -> CurlewError? {
        var buffer = [UInt8](repeating: 0, count: 64)
        for _ in 0..<4 {
            let (decision, _) = buffer.withUnsafeMutableBytes { state.read(into: $0) }
            if case .abort(let error) = decision { return error }
        }
        return nil
    }
}
