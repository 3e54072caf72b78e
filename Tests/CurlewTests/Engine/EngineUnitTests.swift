@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import Testing

@Suite("Engine pieces without I/O")
struct EngineUnitTests {
    @Test func headParserKeepsOnlyTheLastResponsesHeaders() {
        var parser = ResponseHeadParser()
        for line in [
            "HTTP/1.1 302 Found\r\n", "Location: /next\r\n", "\r\n",
            "HTTP/1.1 200 OK\r\n", "Content-Type: text/plain\r\n", "X-Many:  a \r\n", "x-many: b\r\n",
            "Bad Name: dropped\r\n", " folded continuation\r\n", "NoColon\r\n", "\r\n",
        ] {
            _ = Array(line.utf8).withUnsafeBytes { parser.consume(line: $0) }
        }
        let fields = ResponseHeadParser.fields(of: parser.block)
        #expect(fields[.location] == nil)
        #expect(fields[.contentType] == "text/plain")
        #expect(fields[values: HTTPField.Name("X-Many")!] == ["a", "b"])
        #expect(fields.count == 3)
        #expect(parser.status == 200, "the last status line's code")
        #expect(parser.hasField(named: "content-type"))
        #expect(!parser.hasField(named: "location"), "the redirect's Location went with its head")
    }

    /// A status line starts a head only at a head's start; after the last head's blank line,
    /// lines are trailers.
    @Test func headParserTellsStatusLinesFieldsAndTrailersApart() {
        var parser = ResponseHeadParser()
        let lines = [
            "HTTP/1.1 100 Continue\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "X-A: 1\r\n", "HTTP/1.1 404 Spoof: x\r\n", "\r\n",
            "X-Trailer: t\r\n", "HTTP/1.1 500 Late\r\n", "\r\n",
        ]
        let kinds = lines.map { line in Array(line.utf8).withUnsafeBytes { parser.consume(line: $0) } }
        #expect(kinds == [.status, .field, .status, .field, .field, .field, .trailer, .status, .field])
        #expect(parser.status == 500, "after a head has ended, a status line starts the next one (a proxy's CONNECT answer, a 1xx)")
    }

    @Test func statusCodesComeFromTheStatusLine() {
        func code(_ line: String) -> Int { Array(line.utf8).withUnsafeBytes { ResponseHeadParser.statusCode(of: $0) } }
        #expect(code("HTTP/1.1 200 OK\r\n") == 200)
        #expect(code("HTTP/2 304\r\n") == 304)
        #expect(code("HTTP/1.0 99 Odd\r\n") == 0)
        #expect(code("HTTP/1.1 20") == 0)
        #expect(code("HTTP/1.1 2x0 OK") == 0)
        #expect(code("HTTP/1.1") == 0)
    }

    @Test func bufferedSinkEnforcesTheMaximumInBytesReceived() {
        let sink = BufferedBodySink(maximumSize: 10)
        sink.expect(contentLength: 1_000_000)
        let first = Array(repeating: UInt8(1), count: 6).withUnsafeBytes { sink.receive($0) }
        let second = Array(repeating: UInt8(2), count: 4).withUnsafeBytes { sink.receive($0) }
        let third = [UInt8(3)].withUnsafeBytes { sink.receive($0) }
        guard case .proceed = first, case .proceed = second, case .abort(let code, _) = third else {
            Issue.record("unexpected decisions \(first) \(second) \(third)")
            return
        }
        #expect(code == .bodyTooLarge)
        #expect(sink.body.count == 10)
    }

    @Test func timeoutsAreClassifiedByLibcurlState() {
        typealias Facts = CurlResultMapping.Facts
        #expect(CurlResultMapping.timeoutCode(detail: "Timeout was reached", facts: .unconnected) == .connectTimeout)
        #expect(CurlResultMapping.timeoutCode(detail: "Timeout was reached", facts: Facts(connected: true, responseCode: 0, totalTimeoutBeforeConnectTimeout: false)) == .totalTimeout)
        #expect(
            CurlResultMapping.timeoutCode(detail: "Timeout was reached", facts: Facts(connected: false, responseCode: 0, totalTimeoutBeforeConnectTimeout: true)) == .totalTimeout,
            "the total timeout was the shorter one: it fired while connecting")
        #expect(
            CurlResultMapping.timeoutCode(
                detail: "Operation too slow. Less than 1024 bytes/sec transferred the last 30 seconds",
                facts: Facts(connected: true, responseCode: 200, totalTimeoutBeforeConnectTimeout: false)) == .idleTimeout,
            "a download's stall detector is an idle timeout")
    }

    @Test func idleTrackerFiresOnlyAfterAQuietPeriod() {
        var tracker = IdleTracker(timeoutNanoseconds: 1_000, now: 0)
        #expect(tracker.observe(bytesMoved: 0, now: 10) == false)
        #expect(tracker.observe(bytesMoved: 0, now: 900) == false)
        #expect(tracker.observe(bytesMoved: 5, now: 1_500) == false, "bytes moved: the clock restarts")
        #expect(tracker.observe(bytesMoved: 5, now: 2_500) == false, "exactly the timeout is not yet idle")
        #expect(tracker.observe(bytesMoved: 5, now: 2_501) == true)
        // Nothing moved since the clock started: the first sample is no activity, so the clock
        // runs from the start, not from the first sample (up to a sampling period later).
        var quiet = IdleTracker(timeoutNanoseconds: 1_000, now: 0)
        #expect(quiet.observe(bytesMoved: 0, now: 600) == false)
        #expect(quiet.observe(bytesMoved: 0, now: 1_001) == true)
    }

    @Test func onlyTheCommandThatFillsTheInboxWakesTheEngine() {
        var inbox = CurlEngineInbox()
        let first = inbox.post(.cancel(1))
        let second = inbox.post(.cancel(2))
        #expect(first && !second)
        var commands: [CurlEngineInbox.Command] = []
        var jobs: [UnownedJob] = []
        let shutdown = inbox.drain(into: &commands, jobs: &jobs)
        #expect(!shutdown)
        #expect(commands.count == 2 && jobs.isEmpty)
        let afterDrain = inbox.post(.cancel(3))
        #expect(afterDrain)
        // The engine's emptied buffer went into the inbox: the next drain hands back only what
        // was posted since, in order.
        commands.removeAll(keepingCapacity: true)
        inbox.drainCommands(into: &commands)
        guard commands.count == 1, case .cancel(let id) = commands[0] else {
            Issue.record("expected the one command posted after the drain, got \(commands.count)")
            return
        }
        #expect(id == 3)
        #expect(inbox.isEmpty)
    }

    @Test func inboxRejectsWorkAfterShutdownAndStopsOnce() {
        var inbox = CurlEngineInbox()
        let accepted = inbox.post(.cancel(1))
        #expect(accepted)
        guard case .wakeAndJoin = inbox.requestShutdown() else {
            Issue.record("first shutdown must start it")
            return
        }
        guard case .wait = inbox.requestShutdown() else {
            Issue.record("second shutdown must wait")
            return
        }
        let acceptedAfterShutdown = inbox.post(.cancel(2))
        #expect(!acceptedAfterShutdown)
        var commands: [CurlEngineInbox.Command] = []
        var jobs: [UnownedJob] = []
        let shutdown = inbox.drain(into: &commands, jobs: &jobs)
        #expect(commands.count == 1)
        #expect(shutdown)
        let waiters = inbox.markStopped()
        #expect(waiters.isEmpty)
        guard case .resumeNow = inbox.requestShutdown() else {
            Issue.record("shutdown after stop must return at once")
            return
        }
    }

    @Test func ticketOrdersSubmissionAgainstCancellation() {
        let early = TransferTicket(id: 1)
        #expect(early.markCancelled() == false, "nothing to remove from the engine yet")
        #expect(early.markSubmitted() == false, "a cancelled ticket is never submitted")

        let late = TransferTicket(id: 2)
        #expect(late.markSubmitted())
        #expect(late.markCancelled(), "the engine must be told to remove the transfer")
        #expect(late.markCancelled() == false, "only once")
    }
}
