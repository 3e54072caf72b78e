@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// `CurlTransport.send(_:context:)` against the loopback server: streamed, file and collected
/// bodies, uploads from files and streams, metrics and progress events.
@Suite("Transfer dispositions, uploads, metrics and progress", .serialized, .timeLimit(.minutes(2)))
struct TransferDispositionTests {
    // MARK: Streams

    /// Resident memory is process-wide and other suites run in parallel, so the measurement runs
    /// in a child process running only this test (`CURLEW_MEMORY_CHILD=1`); the parent checks
    /// that it passed.
    @Test func aQuarterGibibyteStreamsInBoundedMemory() async throws {
        guard ProcessInfo.processInfo.environment["CURLEW_MEMORY_CHILD"] == "1" else {
            let (status, output) = try await runInChildProcess(
                filter: "TransferDispositionTests/aQuarterGibibyteStreamsInBoundedMemory", environment: ["CURLEW_MEMORY_CHILD": "1"])
            #expect(status == 0, "child process output:\n\(output)")
            #expect(output.contains("1 test"), "child process output:\n\(output)")
            return
        }
        let length = 256 * 1024 * 1024
        let highWaterMark = 1 << 20
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            let request = PreparedRequest(method: .get, url: server.url("/bytes?n=\(length)"))
            let before = residentBytes()
            var peak = before
            var peakBuffered = 0
            let response = try await transport.send(request, context: transferContext(for: request, body: .stream(highWaterMark: highWaterMark)))
            #expect(response.status == .ok)
            #expect(response.metrics == nil, "streams report no metrics")
            guard case .stream(let stream) = response.content else {
                Issue.record("expected a stream, got \(response.content)")
                return
            }
            var verifier = PatternBody.Verifier()
            var chunks = 0
            for try await chunk in stream {
                verifier.consume(chunk)
                chunks += 1
                peakBuffered = max(peakBuffered, stream.buffer.bufferedBytes)
                if chunks % 256 == 0 { peak = max(peak, residentBytes()) }
            }
            peak = max(peak, residentBytes())
            #expect(verifier.offset == length)
            #expect(verifier.mismatches == 0)
            #expect(peakBuffered <= highWaterMark + PatternBody.blockSize)
            #expect(peak - before < residentGrowthLimit, "resident memory grew by \(peak - before) bytes")
            #expect(await eventually { transport.statistics.activeTransfers == 0 })
        }
    }

    @Test func aSlowReaderPausesTheTransferAndTheServerStalls() async throws {
        let length = 32 * 1024 * 1024
        let highWaterMark = 64 * 1024
        let written = ByteCounter()
        try await withLoopback(router: TransferRoutes.router(written: written)) { server, _, transport in
            let request = PreparedRequest(method: .get, url: server.url("/bytes?n=\(length)"))
            let response = try await transport.send(request, context: transferContext(for: request, body: .stream(highWaterMark: highWaterMark)))
            guard case .stream(let stream) = response.content else {
                Issue.record("expected a stream")
                return
            }
            // Nobody reads: the buffer fills to the high-water mark and the transfer pauses.
            #expect(await eventually { transport.statistics.pausedTransfers == 1 })
            #expect(stream.buffer.bufferedBytes >= highWaterMark)
            #expect(stream.buffer.bufferedBytes <= highWaterMark + PatternBody.blockSize)
            // The socket buffers fill, then the server's writes stop.
            var stalledAt = written.value
            #expect(
                await eventually {
                    try? await Task.sleep(for: .milliseconds(200))
                    defer { stalledAt = written.value }
                    return written.value == stalledAt
                })
            #expect(written.value < length, "the server could not send everything: \(written.value)")
            var verifier = PatternBody.Verifier()
            for try await chunk in stream { verifier.consume(chunk) }
            #expect(verifier.offset == length)
            #expect(verifier.mismatches == 0)
            #expect(transport.statistics.receivePauses >= 1)
            #expect(transport.statistics.pausedTransfers == 0)
            #expect(await eventually { written.value == length })
        }
    }

    @Test func droppingTheStreamCancelsTheTransfer() async throws {
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            let request = PreparedRequest(method: .get, url: server.url("/stall?after=\(1024 * 1024)"))
            do {
                let response = try await transport.send(request, context: transferContext(for: request, body: .stream(highWaterMark: 64 * 1024)))
                guard case .stream(let stream) = response.content else {
                    Issue.record("expected a stream")
                    return
                }
                var iterator = stream.makeAsyncIterator()
                let first = try await iterator.next()
                #expect(first?.isEmpty == false)
                #expect(transport.statistics.activeTransfers == 1)
            }
            // Every copy of the stream is gone: the engine drops the transfer, the server sees it.
            #expect(await eventually { transport.statistics.activeTransfers == 0 })
            #expect(await eventually { server.disconnectsDuringResponse == 1 })
        }
    }

    @Test func cancellingTheReadingTaskCancelsTheTransfer() async throws {
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            let request = PreparedRequest(method: .get, url: server.url("/stall?after=\(100 * 1024)"))
            let response = try await transport.send(request, context: transferContext(for: request, body: .stream()))
            guard case .stream(let stream) = response.content else {
                Issue.record("expected a stream")
                return
            }
            let reader = Task {
                var received = 0
                for try await chunk in stream { received += chunk.count }
                return received
            }
            // The reader has everything the server sent and waits for more.
            #expect(await eventually { stream.buffer.bufferedBytes == 0 && server.inFlight(path: "/stall") == 1 })
            try await Task.sleep(for: .milliseconds(100))
            reader.cancel()
            let result = await reader.result
            guard case .failure(let error) = result else {
                Issue.record("expected a cancellation, got \(result)")
                return
            }
            #expect(error is CancellationError, "a cancelled reader sees CancellationError, as everywhere in Curlew")
            #expect(await eventually { transport.statistics.activeTransfers == 0 })
            #expect(await eventually { server.disconnectsDuringResponse == 1 })
        }
    }

    @Test func aConnectionCutAfterTheHeadFailsTheStreamWithATypedError() async throws {
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            let request = PreparedRequest(method: .get, url: server.url("/cut?n=\(1024 * 1024)&after=\(200 * 1024)"))
            let response = try await transport.send(request, context: transferContext(for: request, body: .stream()))
            guard case .stream(let stream) = response.content else {
                Issue.record("expected a stream")
                return
            }
            var received = 0
            let error = await #expect(throws: CurlewError.self) {
                for try await chunk in stream { received += chunk.count }
            }
            #expect(error?.code == .connectionReset)
            #expect(received == 200 * 1024)
        }
    }

    @Test func anIdleStreamFailsWithIdleTimeout() async throws {
        var options = TransferOptions()
        options.idleTimeout = .milliseconds(500)
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            let request = PreparedRequest(method: .get, url: server.url("/stall?after=1000"), options: options)
            let response = try await transport.send(request, context: transferContext(for: request, body: .stream()))
            guard case .stream(let stream) = response.content else {
                Issue.record("expected a stream")
                return
            }
            let error = await #expect(throws: CurlewError.self) {
                for try await _ in stream {}
            }
            #expect(error?.code == .idleTimeout)
            #expect(transport.statistics.activeTransfers == 0)
        }
    }

    @Test func aStreamWithoutBodyEndsAtOnceAndTheLimitDoesNotApply() async throws {
        var options = TransferOptions()
        options.maximumBodySize = 1000
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            let head = PreparedRequest(method: .head, url: server.url("/bytes?n=5000"), options: options)
            let headResponse = try await transport.send(head, context: transferContext(for: head, body: .stream()))
            guard case .stream(let empty) = headResponse.content else {
                Issue.record("expected a stream")
                return
            }
            var chunks = 0
            for try await _ in empty { chunks += 1 }
            #expect(chunks == 0)
            #expect(headResponse.headers[.contentLength] == "5000")

            let get = PreparedRequest(method: .get, url: server.url("/bytes?n=5000&length=0"), options: options)
            let response = try await transport.send(get, context: transferContext(for: get, body: .stream()))
            guard case .stream(let stream) = response.content else {
                Issue.record("expected a stream")
                return
            }
            #expect(try await stream.collect(upTo: 10_000).count == 5000, "maximumBodySize does not apply to streams")
        }
    }

    // MARK: Files

    @Test func aFileDownloadHasTheExactBytesAndMode0600() async throws {
        let length = 3 * 1024 * 1024 + 17
        let path = temporaryPath("download")
        defer { unlink(path) }
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            for chunked in [false, true] {
                unlink(path)
                let request = PreparedRequest(method: .get, url: server.url("/bytes?n=\(length)\(chunked ? "&length=0" : "")"))
                let response = try await transport.send(request, context: transferContext(for: request, body: .file(path: path)))
                guard case .file(let writtenPath, let writtenLength) = response.content else {
                    Issue.record("expected a file, got \(response.content)")
                    return
                }
                #expect(writtenPath == path)
                #expect(writtenLength == Int64(length))
                #expect(response.body.isEmpty)
                #expect(response.metrics?.bytesReceived ?? 0 >= Int64(length))
                let onDisk = try Data(contentsOf: URL(fileURLWithPath: path))
                #expect(onDisk == Data(PatternBody.bytes(length)))
                var info = stat()
                #expect(stat(path, &info) == 0)
                #expect(info.st_mode & 0o777 == 0o600)
            }
        }
    }

    @Test func anExistingFileIsRefusedAndNothingIsSent() async throws {
        let path = temporaryPath("existing")
        defer { unlink(path) }
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: path))
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            let request = PreparedRequest(method: .get, url: server.url("/bytes?n=10"))
            let error = await #expect(throws: CurlewError.self) {
                try await transport.send(request, context: transferContext(for: request, body: .file(path: path)))
            }
            #expect(error?.code == .fileNotWritable)
            #expect(error?.level == .invalidRequest)
            let kept = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(kept == Data("keep me".utf8))
            #expect(server.requestCount == 0)

            // A symbolic link is not followed either.
            let link = temporaryPath("link")
            defer { unlink(link) }
            #expect(symlink(temporaryPath("target"), link) == 0)
            let linkError = await #expect(throws: CurlewError.self) {
                try await transport.send(request, context: transferContext(for: request, body: .file(path: link)))
            }
            #expect(linkError?.code == .fileNotWritable)
        }
    }

    @Test func aFailedDownloadRemovesThePartialFile() async throws {
        let path = temporaryPath("partial")
        defer { unlink(path) }
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            let request = PreparedRequest(method: .get, url: server.url("/cut?n=\(1024 * 1024)&after=\(300 * 1024)"))
            let error = await #expect(throws: CurlewError.self) {
                try await transport.send(request, context: transferContext(for: request, body: .file(path: path)))
            }
            #expect(error?.code == .connectionReset)
            #expect(access(path, F_OK) != 0, "the partial file is gone")
        }
    }

    // MARK: Uploads

    @Test func uploadFromAFile() async throws {
        let body = PatternBody.bytes(1024 * 1024 + 5)
        let path = temporaryPath("upload")
        defer { unlink(path) }
        try Data(body).write(to: URL(fileURLWithPath: path))
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            for method in [HTTPRequest.Method.post, .put, .patch] {
                let request = PreparedRequest(method: method, url: server.url("/upload"), content: .file(path: path, length: Int64(body.count)))
                let response = try await transport.send(request, context: transferContext(for: request))
                #expect(String(decoding: response.body, as: UTF8.self) == "\(method.rawValue) \(body.count) \(fnv1a(body)) - \(body.count)")
                #expect(response.metrics?.bytesSent ?? 0 > Int64(body.count))
            }
        }
    }

    @Test func anUnreadableFileFailsBeforeSending() async throws {
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            let request = PreparedRequest(method: .put, url: server.url("/upload"), content: .file(path: temporaryPath("missing"), length: 10))
            let error = await #expect(throws: CurlewError.self) {
                try await transport.send(request, context: transferContext(for: request))
            }
            #expect(error?.code == .fileUnreadable)
            #expect(server.requestCount == 0)
        }
    }

    @Test(arguments: [true, false])
    func uploadFromAStream(knownLength: Bool) async throws {
        let body = PatternBody.bytes(700 * 1024 + 3)
        let pieces = stride(from: 0, to: body.count, by: 100 * 1024).map { Data(body[$0..<min($0 + 100 * 1024, body.count)]) }
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            for method in [HTTPRequest.Method.post, .put, .patch] {
                // A slow producer: the read callback pauses until each chunk arrives.
                let stream = RequestBodyStream(length: knownLength ? Int64(body.count) : nil) {
                    TestChunks(chunks: pieces, delay: .milliseconds(5))
                }
                let request = PreparedRequest(method: method, url: server.url("/upload"), content: .stream(stream))
                let response = try await transport.send(request, context: transferContext(for: request))
                let expected =
                    knownLength
                    ? "\(method.rawValue) \(body.count) \(fnv1a(body)) - \(body.count)"
                    : "\(method.rawValue) \(body.count) \(fnv1a(body)) chunked -"
                #expect(String(decoding: response.body, as: UTF8.self) == expected)
            }
            // The pooled handle forgets upload mode, sizes and callbacks.
            let get = PreparedRequest(method: .get, url: server.url("/bytes?n=3"))
            let response = try await transport.send(get, context: transferContext(for: get))
            #expect(response.body == Data(PatternBody.bytes(3)))
            let seen = try #require(server.requests(path: "/bytes").last)
            #expect(seen.method == "GET")
            #expect(seen.body.isEmpty)
            #expect(seen.header("Transfer-Encoding") == nil)
            #expect(seen.header("Content-Length") == nil)
        }
    }

    @Test func aThrowingOrMiscountedStreamFailsWithBodyStreamFailed() async throws {
        let piece = Data(repeating: 7, count: 1000)
        let cases: [(String, RequestBodyStream)] = [
            ("throws", RequestBodyStream(length: nil) { TestChunks(chunks: [piece, piece, piece], throwAfter: 2) }),
            ("short", RequestBodyStream(length: 3000) { TestChunks(chunks: [piece, piece]) }),
            ("long", RequestBodyStream(length: 1500) { TestChunks(chunks: [piece, piece]) }),
        ]
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            for (name, stream) in cases {
                let request = PreparedRequest(method: .post, url: server.url("/upload"), content: .stream(stream))
                let error = await #expect(throws: CurlewError.self, "\(name)") {
                    try await transport.send(request, context: transferContext(for: request))
                }
                #expect(error?.code == .bodyStreamFailed, "\(name)")
                if name == "throws" { #expect(error?.underlying is TestChunks.Boom) }
            }
            #expect(await eventually { transport.statistics.activeTransfers == 0 })
        }
    }

    // MARK: Metrics and events

    @Test func metricsOfPlainGetsAndRedirects() async throws {
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            let request = PreparedRequest(method: .get, url: server.url("/bytes?n=1000"))
            let first = try #require(try await transport.send(request, context: transferContext(for: request)).metrics)
            let second = try #require(try await transport.send(request, context: transferContext(for: request)).metrics)
            #expect(first.reusedConnection == false)
            #expect(second.reusedConnection == true)
            for metrics in [first, second] {
                #expect(metrics.httpVersion == "1.1")
                #expect(metrics.total >= metrics.firstByte)
                #expect(metrics.firstByte >= metrics.connect)
                #expect(metrics.bytesReceived >= 1000)
                #expect(metrics.bytesSent > 0)
                #expect(metrics.redirectCount == 0)
                #expect(metrics.tlsHandshake == .zero)
            }

            let redirecting = PreparedRequest(method: .get, url: server.url("/redirect/3"))
            let redirected = try await followingRedirects(redirecting, over: transport, context: transferContext(for: redirecting))
            #expect(redirected.body == Data("done".utf8))
            #expect(redirected.metrics?.redirectCount == 3)
            #expect(redirected.url == server.url("/redirect/0"))

            // The redirect step reports each hop as an event.
            var options = TransferOptions()
            options.originBoundHeaders = [HTTPField.Name("X-Signature")!]
            let broadcaster = EventBroadcaster()
            let events = broadcaster.subscribe()
            let followed = PreparedRequest(method: .get, url: server.url("/redirect/2"), options: options)
            let response = try await followingRedirects(followed, over: transport, context: transferContext(for: followed, broadcaster: broadcaster))
            broadcaster.finish()
            #expect(response.metrics?.redirectCount == 2)
            var locations: [String] = []
            var heads: [Int] = []
            for await event in events {
                if event.kind == .redirected, let location = event.location { locations.append(location) }
                if event.kind == .headReceived, let status = event.status { heads.append(status.code) }
            }
            #expect(locations == [server.url("/redirect/1"), server.url("/redirect/0")])
            #expect(heads == [200], "hops are not final heads")
        }
    }

    @Test(arguments: [ResponseBodyDisposition.collect, .stream()])
    func progressEventsRiseToTheBodySize(disposition: ResponseBodyDisposition) async throws {
        let length = 4 * 1024 * 1024
        try await withLoopback(router: TransferRoutes.router()) { server, _, transport in
            let broadcaster = EventBroadcaster()
            let events = broadcaster.subscribe(bufferingNewest: 100_000)
            let request = PreparedRequest(method: .get, url: server.url("/bytes?n=\(length)"))
            let context = transferContext(for: request, body: disposition, broadcaster: broadcaster)
            let response = try await transport.send(request, context: context)
            if case .stream(let stream) = response.content {
                var received = 0
                for try await chunk in stream { received += chunk.count }
                #expect(received == length)
                #expect(await eventually { transport.statistics.activeTransfers == 0 })
            } else {
                #expect(response.body.count == length)
            }
            broadcaster.finish()
            var received: [Int64] = []
            var heads: [Int] = []
            for await event in events {
                #expect(event.requestID == context.requestID)
                if event.kind == .progress, let progress = event.progress {
                    received.append(progress.bytesReceived)
                    if progress.bytesReceived > 0 { #expect(progress.totalBytesToReceive == Int64(length)) }
                }
                if event.kind == .headReceived, let status = event.status { heads.append(status.code) }
            }
            #expect(heads == [200])
            #expect(received.count >= 2)
            #expect(received == received.sorted(), "bytesReceived never decreases")
            #expect(received.last == Int64(length))
        }
    }
}
