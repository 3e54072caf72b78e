import Foundation
import LoopbackServer
import Synchronization
import TestSupport
import Testing

/// Where the smoke tests expect the `curl` command-line tool.
private let smokeTestCurlPath = "/usr/bin/curl"

/// Checks `LoopbackServer` on its own, with the `curl` command-line tool as the client.
@Suite(
    "LoopbackServer smoke tests (curl CLI)",
    .enabled(if: FileManager.default.isExecutableFile(atPath: smokeTestCurlPath))
)
struct LoopbackServerSmokeTests {
    /// A value shared between a handler and the test.
    final class Box<Value: Sendable>: Sendable {
        private let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
        var current: Value { value.withLock { $0 } }
        func set(_ newValue: Value) { value.withLock { $0 = newValue } }
    }

    struct CurlRun {
        var exitStatus: Int32
        var data: Data
        var output: String { String(decoding: data, as: UTF8.self) }
        var outputBytes: Int { data.count }
        /// When the test killed curl (see `terminateWhen`).
        var terminatedAt: ContinuousClock.Instant?
    }

    /// Runs `curl -sS <arguments>` without blocking a cooperative thread; stdout goes to a temp file.
    ///
    /// With `terminateWhen`, curl is killed (SIGKILL, so the kernel closes its socket) as soon as
    /// the condition holds; `terminatedAt` is when that happened.
    static func curl(
        _ arguments: [String],
        terminateWhen condition: (@Sendable () -> Bool)? = nil
    ) async throws -> CurlRun {
        let outputURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("loopback-smoke-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let outputHandle = try FileHandle(forWritingTo: outputURL)
        defer { try? outputHandle.close() }

        // posix_spawn, not Foundation's Process (see SpawnedProcess).
        let process = try SpawnedProcess(
            path: smokeTestCurlPath, arguments: ["--noproxy", "*", "-sS"] + arguments,
            standardOutput: outputHandle.fileDescriptor)
        async let exitStatus = process.terminationStatus()

        var terminatedAt: ContinuousClock.Instant?
        if let condition {
            if await eventually(condition) {
                terminatedAt = .now
                // SIGKILL: the test runner may hand children an ignored or blocked SIGTERM.
                process.kill(SIGKILL)
            } else {
                Issue.record("the condition for terminating curl never held")
            }
        }
        let status = await exitStatus
        let data = try Data(contentsOf: outputURL)
        return CurlRun(exitStatus: status, data: data, terminatedAt: terminatedAt)
    }

    /// Polls `condition` every 5 ms until it holds; `limit` only guards against a hang (a machine
    /// slowed down by a sanitizer or a busy build waits for the effect instead of failing).
    static func eventually(_ condition: () -> Bool, for limit: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    /// Runs `body` with a started server and shuts it down afterwards, also when `body` throws.
    static func withServer(
        _ handler: @escaping @Sendable (ServerRequest) async -> ServerResponse,
        _ body: (LoopbackServer) async throws -> Void
    ) async throws {
        let server = try await LoopbackServer.start(handler: handler)
        do {
            try await body(server)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    @Test func recordsMethodPathQueryHeadersAndBody() async throws {
        try await Self.withServer({ _ in .json(#"{"ok":true}"#, status: 201) }) { server in
            #expect(server.baseURL == "http://127.0.0.1:\(server.port)")
            let run = try await Self.curl([
                "-X", "POST", "-H", "X-Test: one", "-H", "x-test: two",
                "-H", "Content-Type: text/plain", "--data-binary", "hello body",
                "-w", "|%{http_code}|%{content_type}",
                "\(server.baseURL)/search?key=a%20b&plus=1+2&flag&&e=",
            ])
            #expect(run.exitStatus == 0)
            #expect(run.output == #"{"ok":true}|201|application/json"#)

            #expect(server.requestCount == 1)
            let request = try #require(server.requests.first)
            #expect(request.method == "POST")
            #expect(request.uri == "/search?key=a%20b&plus=1+2&flag&&e=")
            #expect(request.path == "/search")
            #expect(request.query == "key=a%20b&plus=1+2&flag&&e=")
            #expect(
                request.queryItems == [
                    .init(name: "key", value: "a b"), .init(name: "plus", value: "1+2"),
                    .init(name: "flag", value: ""), .init(name: "e", value: ""),
                ])
            #expect(request.queryValue("key") == "a b")
            #expect(request.headerValues("X-TEST") == ["one", "two"])
            #expect(
                request.headers.filter { $0.name.lowercased() == "x-test" } == [
                    .init(name: "X-Test", value: "one"), .init(name: "x-test", value: "two"),
                ])
            #expect(request.header("host") == "127.0.0.1:\(server.port)")
            #expect(request.header("Content-Type") == "text/plain")
            #expect(request.header("Content-Length") == "10")
            #expect(request.header("X-Missing") == nil)
            #expect(request.bodyText == "hello body")
            #expect(request.body == Array("hello body".utf8))
            #expect(request.httpVersion == "HTTP/1.1")
            #expect(request.connectionID == request.connection.id)
            #expect(server.requests(path: "/search").count == 1)
            #expect(server.requests(path: "/other").isEmpty)

            let noQuery = try await Self.curl(["\(server.baseURL)/plain"])
            #expect(noQuery.output == #"{"ok":true}"#)
            let plain = try #require(server.requests(path: "/plain").first)
            #expect(plain.method == "GET")
            #expect(plain.query == nil)
            #expect(plain.queryItems.isEmpty)
            #expect(plain.body.isEmpty)
        }
    }

    @Test func sequentialRequestsReuseOneConnection() async throws {
        try await Self.withServer({ request in .text("[\(request.path)]") }) { server in
            let urls = (1...5).map { "\(server.baseURL)/k/\($0)" }
            let run = try await Self.curl(urls)
            #expect(run.exitStatus == 0)
            #expect(run.output == "[/k/1][/k/2][/k/3][/k/4][/k/5]")
            #expect(server.requestCount == 5)
            #expect(server.connectionsAccepted == 1)
            #expect(server.requests.map(\.path) == ["/k/1", "/k/2", "/k/3", "/k/4", "/k/5"])
            #expect(Set(server.requests.map(\.connectionID)).count == 1)
            #expect(await Self.eventually { server.openConnections == 0 })

            server.resetStatistics()
            #expect(server.requestCount == 0)
            #expect(server.connectionsAccepted == 0)

            // Connection: close from the client, and HTTP/1.0 without keep-alive: one connection each.
            let closing = try await Self.curl(["-H", "Connection: close", urls[0], urls[1]])
            #expect(closing.output == "[/k/1][/k/2]")
            let http10 = try await Self.curl(["-0", urls[2], urls[3]])
            #expect(http10.output == "[/k/3][/k/4]")
            #expect(server.connectionsAccepted == 4)
            #expect(Set(server.requests.map(\.connectionID)).count == 4)
            #expect(server.requests.last?.httpVersion == "HTTP/1.0")
        }
    }

    @Test func framingOfBytesAndStreams() async throws {
        try await Self.withServer({ request in
            switch request.path {
            case "/bytes":
                return .text("hello")
            case "/stream":
                return .stream(headers: [("X-Kind", "chunked")]) { writer in
                    try await writer.write("hello")
                    try await writer.write([])
                    try await writer.write(Array(" world".utf8))
                }
            case "/stream-length":
                return .stream(headers: [("Content-Length", "10")]) { writer in
                    try await writer.write("hello")
                    try await writer.write("world")
                }
            case "/redirect":
                return .redirect(to: "/bytes")
            default:
                return ServerResponse(status: 204)
            }
        }) { server in
            let raw = try await Self.curl([
                "-i", "--raw", "\(server.baseURL)/bytes", "\(server.baseURL)/stream",
                "\(server.baseURL)/stream-length", "\(server.baseURL)/redirect", "\(server.baseURL)/empty",
            ])
            #expect(raw.exitStatus == 0)
            let output = raw.output
            #expect(output.contains("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 5\r\n\r\nhello"))
            #expect(output.contains("X-Kind: chunked\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"))
            #expect(output.contains("Content-Length: 10\r\n\r\nhelloworld"))
            #expect(output.contains("HTTP/1.1 302 Found\r\nLocation: /bytes\r\nContent-Length: 0\r\n\r\n"))
            #expect(output.contains("HTTP/1.1 204 No Content\r\n\r\n"))
            #expect(server.connectionsAccepted == 1)

            let followed = try await Self.curl(["-L", "\(server.baseURL)/redirect"])
            #expect(followed.output == "hello")
            let head = try await Self.curl(["-I", "\(server.baseURL)/bytes"])
            #expect(head.output.contains("Content-Length: 5\r\n"))
            #expect(!head.output.contains("hello"))

            // HTTP/1.0 gets the stream unchunked, delimited by closing the connection.
            let http10 = try await Self.curl(["-0", "-i", "--raw", "\(server.baseURL)/stream"])
            #expect(http10.output.hasPrefix("HTTP/1.0 200 OK\r\n"))
            #expect(http10.output.hasSuffix("\r\n\r\nhello world"))
            #expect(!http10.output.lowercased().contains("transfer-encoding"))
        }
    }

    @Test func closedReturnsPromptlyWhenTheClientGoesAway() async throws {
        let closedAt = Box<ContinuousClock.Instant?>(nil)
        try await Self.withServer({ request in
            await request.connection.closed()
            closedAt.set(.now)
            return .text("too late")
        }) { server in
            // Killed once the handler is waiting; the kernel then closes curl's socket.
            let run = try await Self.curl(["--max-time", "120", "\(server.baseURL)/hold"]) {
                server.inFlight(path: "/hold") == 1
            }
            #expect(run.exitStatus == SIGKILL)
            #expect(run.terminatedAt != nil)
            #expect(await Self.eventually { closedAt.current != nil })
            #expect(server.disconnectsDuringResponse == 1)
            #expect(await Self.eventually { server.inFlight(path: "/hold") == 0 })
            #expect(server.peakInFlight(path: "/hold") == 1)
            #expect(await Self.eventually { server.openConnections == 0 })
            #expect(server.requests(path: "/hold").first?.connection.isClosed == true)
        }
    }

    @Test func giveUpByTimeoutIsNoticedToo() async throws {
        try await Self.withServer({ request in
            await request.connection.closed()
            return .text("too late")
        }) { server in
            let run = try await Self.curl(["--max-time", "0.5", "\(server.baseURL)/hold"])
            #expect(run.exitStatus == 28)  // operation timed out
            if server.requestCount == 1 {  // on a very busy machine the request may not have made it in time
                #expect(await Self.eventually { server.disconnectsDuringResponse == 1 })
            }
            #expect(await Self.eventually { server.inFlight(path: "/hold") == 0 })
        }
    }

    @Test func clientLeavingMidStreamIsCountedAndStopsTheWriter() async throws {
        let chunksWritten = Box(0)
        let writerFailed = Box(false)
        try await Self.withServer({ _ in
            .stream { writer in
                do {
                    for index in 1...1_000 {
                        try await writer.write([UInt8](repeating: 65, count: 1_000))
                        chunksWritten.set(index)
                        try await Task.sleep(for: .milliseconds(5))
                    }
                } catch {
                    writerFailed.set(true)
                    throw error
                }
            }
        }) { server in
            let run = try await Self.curl(["--max-time", "120", "\(server.baseURL)/drip"]) {
                chunksWritten.current >= 5
            }
            #expect(run.exitStatus == SIGKILL)
            #expect(await Self.eventually { writerFailed.current })
            #expect(server.disconnectsDuringResponse == 1)
            #expect(await Self.eventually { server.inFlight(path: "/drip") == 0 })
            #expect(chunksWritten.current < 1_000)
        }
    }

    @Test func routerMatchesSegmentsAndAnswers404() async throws {
        var router = LoopbackRouter()
        router.on("GET", "/users/{id}/posts/{post}") { _, parameters in
            .text("\(parameters["id"] ?? "?")/\(parameters["post"] ?? "?")")
        }
        router.on("post", "/users") { request, _ in .text("created \(request.bodyText)", status: 201) }
        let server = try await LoopbackServer.start(router: router)
        let base = server.baseURL
        let matched = try await Self.curl(["\(base)/users/a%20b/posts/7"])
        #expect(matched.output == "a b/7")
        let created = try await Self.curl(["-w", "|%{http_code}", "-d", "x", "\(base)/users"])
        #expect(created.output == "created x|201")
        let missing = try await Self.curl(["-w", "|%{http_code}", "\(base)/users/1/posts"])
        #expect(missing.output == #"{"error":"not found"}|404"#)
        let wrongMethod = try await Self.curl(["-w", "|%{http_code}", "-X", "DELETE", "\(base)/users/1/posts/2"])
        #expect(wrongMethod.output == #"{"error":"not found"}|404"#)
        let direct = await router.handle(ServerRequest(method: "GET", uri: "/users/x/posts/y?z=1"))
        #expect(direct.status == 200)
        await server.shutdown()
        await server.shutdown()  // idempotent
        let refused = try await Self.curl(["\(base)/users"])
        #expect(refused.exitStatus == 7)  // couldn't connect
    }

    @Test func manyConcurrentConnections() async throws {
        // A gate instead of a sleep: the first 50 handlers wait until 50 are running, so at least
        // 50 overlap however slowly curl opens its connections (a sanitized or busy machine).
        let overlap = 50
        let arrived = Box(0)
        try await Self.withServer({ _ in
            if arrived.increment() <= overlap {
                let opened = await Self.eventually { arrived.current >= overlap }
                if !opened { return .text("gate never opened", status: 500) }
            }
            return .text("ok")
        }) { server in
            let urls = (0..<200).map { "\(server.baseURL)/slow?i=\($0)" }
            let run = try await Self.curl(["-Z", "--parallel-immediate", "--parallel-max", "200"] + urls)
            #expect(run.exitStatus == 0)
            #expect(run.output == String(repeating: "ok", count: 200))
            #expect(server.requestCount == 200)
            #expect(server.connectionsAccepted >= overlap)
            #expect(server.peakInFlight(path: "/slow") >= overlap)
            #expect(server.inFlight(path: "/slow") == 0)
        }
    }

    @Test func largeBodiesBothWays() async throws {
        let size = 20_000_000
        let block = (0..<251).map { UInt8($0) }  // a prime length, so chunk boundaries never line up
        var payload: [UInt8] = []
        payload.reserveCapacity(size)
        while payload.count < size {
            payload.append(contentsOf: block.prefix(size - payload.count))
        }
        try await Self.withServer({ [payload] request in
            if request.method == "POST" {
                let intact = request.body == payload
                return .text("\(request.body.count) \(intact)")
            }
            return ServerResponse(body: payload)
        }) { server in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("loopback-smoke-\(UUID().uuidString).bin")
            try Data(payload).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }

            // curl sends `Expect: 100-continue` for a body this size (see `interimContinueIsSent`).
            let upload = try await Self.curl(["--data-binary", "@\(file.path)", "\(server.baseURL)/upload"])
            #expect(upload.output == "\(size) true")
            #expect(server.requests.first?.header("Expect") == "100-continue")

            let download = try await Self.curl(["\(server.baseURL)/download"])
            #expect(download.data == Data(payload))
        }
    }

    @Test func interimContinueIsSent() async throws {
        try await Self.withServer({ request in .text(request.bodyText) }) { server in
            // Without a `100 Continue` curl would wait 60 s before sending the body and give up
            // after 20 s, so a response at all proves the interim status was sent.
            let run = try await Self.curl([
                "--expect100-timeout", "60", "--max-time", "20", "-H", "Expect: 100-continue", "-d", "payload", "\(server.baseURL)/echo",
            ])
            #expect(run.output == "payload")
            #expect(server.requests.first?.header("expect") == "100-continue")
        }
    }

    @Test func shutdownClosesOpenConnectionsAndWakesHandlers() async throws {
        let woke = Box(false)
        let server = try await LoopbackServer.start { request in
            await request.connection.closed()
            woke.set(true)
            return .text("late")
        }
        // curl's limit only guards against a hang: the shutdown below is what ends the request.
        async let run = Self.curl(["--max-time", "120", "\(server.baseURL)/hold"])
        #expect(await Self.eventually { server.requestCount == 1 })
        await server.shutdown()
        #expect(server.openConnections == 0)
        let result = try await run
        #expect(result.exitStatus == 52)  // empty reply from server
        #expect(await Self.eventually { woke.current })
        #expect(server.disconnectsDuringResponse == 0)  // the server closed it, not the client
        await server.shutdown()
    }
}

extension LoopbackServerSmokeTests.Box where Value == Int {
    /// Adds one and returns the new count.
    func increment() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
}
