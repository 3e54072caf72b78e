@testable import Curlew
import Foundation
import Testing

@Suite("Transfer state machine and body hand-offs without I/O")
struct TransferStateMachineTests {
    @Test func collectResumesTheCallerOnlyAtTheEnd() {
        var machine = TransferStateMachine(resumesAtHead: false)
        #expect(machine.phase == .configured)
        let attached = machine.attach()
        #expect(attached)
        let attachedAgain = machine.attach()
        #expect(attachedAgain == false, "attached once")
        let head = machine.bodyArrived()
        #expect(head == .headComplete(resumeCaller: false))
        #expect(machine.phase == .receiving)
        let secondHead = machine.bodyArrived()
        #expect(secondHead == .none, "the head completes once")
        #expect(machine.callerWaiting)
        let completion = machine.complete()
        #expect(completion == .resumeCaller(reportHead: false))
        #expect(machine.phase == .finished)
        let secondCompletion = machine.complete()
        #expect(secondCompletion == .none)
        let lateFailure = machine.fail()
        #expect(lateFailure == .none, "a late failure (a cancel racing completion) is ignored")
    }

    @Test func responseWithoutBodyReportsItsHeadAtCompletion() {
        for resumesAtHead in [false, true] {
            var machine = TransferStateMachine(resumesAtHead: resumesAtHead)
            _ = machine.attach()
            let completion = machine.complete()
            #expect(completion == .resumeCaller(reportHead: true))
        }
    }

    @Test func streamResumesAtTheHeadThenEndsTheStream() {
        var machine = TransferStateMachine(resumesAtHead: true)
        _ = machine.attach()
        let head = machine.bodyArrived()
        #expect(head == .headComplete(resumeCaller: true))
        #expect(machine.phase == .streaming)
        #expect(!machine.callerWaiting)
        let completion = machine.complete()
        #expect(completion == .endStream)
    }

    @Test func failureGoesToTheCallerBeforeTheHeadAndToTheStreamAfter() {
        var early = TransferStateMachine(resumesAtHead: true)
        let rejection = early.fail()
        #expect(rejection == .failCaller, "rejected before it was attached")
        let attachedAfterRejection = early.attach()
        #expect(attachedAfterRejection == false)

        var collecting = TransferStateMachine(resumesAtHead: false)
        _ = collecting.attach()
        _ = collecting.bodyArrived()
        let collectingFailure = collecting.fail()
        #expect(collectingFailure == .failCaller)

        var streaming = TransferStateMachine(resumesAtHead: true)
        _ = streaming.attach()
        _ = streaming.bodyArrived()
        let paused = streaming.receivePaused()
        #expect(paused)
        let streamingFailure = streaming.fail()
        #expect(streamingFailure == .failStream)
        #expect(streaming.phase == .failed)
        #expect(streaming.isPaused == false)
    }

    @Test func pauseAndResumeTrackEachDirection() {
        var machine = TransferStateMachine(resumesAtHead: true)
        _ = machine.attach()
        machine.sendPausedForData()
        #expect(machine.isPaused)
        _ = machine.bodyArrived()
        let paused = machine.receivePaused()
        #expect(paused)
        let pausedAgain = machine.receivePaused()
        #expect(pausedAgain == false, "already paused")
        #expect(machine.receivePauses == 1)
        let nothingReady = machine.resume(receiveReady: false, sendReady: false)
        #expect(nothingReady == nil, "nothing ready: no curl_easy_pause call")
        let sendReady = machine.resume(receiveReady: false, sendReady: true)
        #expect(sendReady == .init(receive: true, send: false))
        #expect(machine.phase == .paused)
        let bothReady = machine.resume(receiveReady: true, sendReady: true)
        #expect(bothReady == .init(receive: false, send: false))
        #expect(machine.phase == .streaming)
        #expect(!machine.isPaused)
        let alreadyRunning = machine.resume(receiveReady: true, sendReady: true)
        #expect(alreadyRunning == nil)
        _ = machine.complete()
        machine.sendPausedForData()
        #expect(!machine.isPaused, "nothing pauses a finished transfer")
    }

    @Test func collectingSinksNeverPause() {
        var machine = TransferStateMachine(resumesAtHead: false)
        _ = machine.attach()
        _ = machine.bodyArrived()
        let paused = machine.receivePaused()
        #expect(paused == false)
        #expect(machine.phase == .receiving)
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
