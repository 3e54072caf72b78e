import Curlew
import CurlewOpenAPI
import Foundation
import HTTPTypes
import InMemoryTracing
import OpenAPIRuntime
import Synchronization
import Testing

/// Records what the generated client's middleware sees: the response head as the transport
/// returned it, before the generated code reads it.
final class HeadRecorder: ClientMiddleware, Sendable {
    let responses = Mutex<[HTTPResponse]>([])
    /// Fields appended to every request, in order.
    let extraFields: [HTTPField]

    init(extraFields: [HTTPField] = []) { self.extraFields = extraFields }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        for field in extraFields { request.headerFields.append(field) }
        let (response, body) = try await next(request, body, baseURL)
        responses.withLock { $0.append(response) }
        return (response, body)
    }
}

/// A body of `count` pattern bytes (`i & 0xFF`) in 1 MiB chunks.
func patternBody(_ count: Int, length: HTTPBody.Length, iteration: IterationBehavior) -> HTTPBody {
    let chunks = PatternChunks(count: count)
    return HTTPBody(chunks, length: length, iterationBehavior: iteration)
}

/// `count` pattern bytes as an async sequence that can be iterated again.
struct PatternChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    typealias Failure = any Error
    let count: Int

    func makeAsyncIterator() -> Iterator { Iterator(remaining: count) }

    struct Iterator: AsyncIteratorProtocol {
        typealias Element = ArraySlice<UInt8>
        typealias Failure = any Error
        var remaining: Int
        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard remaining > 0 else { return nil }
            let size = Swift.min(remaining, PetStoreServer.patternChunk.count)
            remaining -= size
            return PetStoreServer.patternChunk[0..<size]
        }
    }
}

/// Waits (bounded) until `condition` holds; `false` if it never did.
func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<2_000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// The Curlew error under the runtime's `ClientError`.
func curlewError(of error: any Error) -> CurlewError? {
    ((error as? ClientError)?.underlyingError ?? error) as? CurlewError
}

@Suite("CurlewTransport through a generated client")
struct CurlewTransportTests {
    func makeClient(
        _ store: PetStoreServer, middleware: [any APIMiddleware] = [], cache: ResponseCache? = nil, configuration: CurlewTransport.Configuration = .init(),
        clientMiddlewares: [any ClientMiddleware] = []
    ) throws -> (Client, APIClient) {
        var all = middleware
        if let cache { all.append(cache) }
        let api = APIClient(configuration: ClientConfiguration(baseURL: store.server.baseURL, middleware: all))
        let client = Client(serverURL: try store.serverURL, transport: CurlewTransport(client: api, configuration: configuration), middlewares: clientMiddlewares)
        return (client, api)
    }

    @Test("JSON request and response bodies round-trip; repeated request fields arrive in order")
    func jsonBodies() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let recorder = HeadRecorder(extraFields: [HTTPField(name: .init("X-Tag")!, value: "one"), HTTPField(name: .init("X-Tag")!, value: "two")])
        let (client, _) = try makeClient(store, clientMiddlewares: [recorder])
        let created = try await client.createPet(body: .json(.init(name: "Ada"))).created.body.json
        #expect(created == Components.Schemas.Pet(id: 7, name: "Ada", tag: "one,two"))
        let pet = try await client.getPet(path: .init(petId: 3)).ok.body.json
        #expect(pet == Components.Schemas.Pet(id: 3, name: "Pet 3"))
        let missing = try await client.getPet(path: .init(petId: 404))
        guard case .notFound = missing else {
            Issue.record("expected 404, got \(missing)")
            return
        }
    }

    @Test("Repeated response fields reach the generated client, in order")
    func repeatedResponseHeaders() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let recorder = HeadRecorder()
        let (client, _) = try makeClient(store, clientMiddlewares: [recorder])
        let pets = try await client.listPets().ok.body.json
        #expect(pets.map(\.name) == ["Rex", "Tom"])
        let head = try #require(recorder.responses.withLock { $0.first })
        #expect(head.headerFields[values: .setCookie] == ["session=abc; Path=/", "theme=dark; Path=/"])
        #expect(head.headerFields[values: HTTPField.Name("X-Trace")!] == ["first", "second"])
    }

    @Test("A 64 MiB download streams through the generated client, every byte in order")
    func largeDownload() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.DownloadBlob.id] = OperationPolicy(options: RequestOptions(totalTimeout: .seconds(600)))
        let (client, _) = try makeClient(store, configuration: configuration)
        let body = try await client.downloadBlob(path: .init(name: "64")).ok.body.binary
        #expect(body.length == .known(64 << 20))
        #expect(body.iterationBehavior == .single)
        var received = 0
        var ordered = true
        for try await chunk in body {
            // The first and last byte of every chunk sit where the pattern puts them.
            if chunk.first != UInt8(truncatingIfNeeded: received) || chunk.last != UInt8(truncatingIfNeeded: received + chunk.count - 1) { ordered = false }
            received += chunk.count
        }
        #expect(received == 64 << 20)
        #expect(ordered)
    }

    @Test("A 32 MiB upload of unknown length is streamed from the HTTPBody, every byte intact")
    func largeUpload() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.UploadBlob.id] = OperationPolicy(options: RequestOptions(totalTimeout: .seconds(600)))
        let (client, _) = try makeClient(store, configuration: configuration)
        let receipt = try await client.uploadBlob(path: .init(name: "big"), body: .binary(patternBody(32 << 20, length: .unknown, iteration: .single))).ok.body.json
        #expect(receipt.bytes == 32 << 20)
        let upload = try #require(store.uploads.first)
        #expect(upload.bytes == 32 << 20)
        #expect(upload.intact)
        #expect(store.uploads.count == 1)
    }

    @Test("An upload to a route whose bodies the loopback server counts and drops: the count is exact, no byte is kept")
    func countedUpload() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let (client, _) = try makeClient(store)
        let size = (3 << 20) + 17
        let receipt = try await client.uploadBlob(path: .init(name: "sink"), body: .binary(patternBody(size, length: .known(Int64(size)), iteration: .single))).ok.body.json
        #expect(receipt.bytes == Int64(size))
        let requests = store.server.requests(path: "/v1/blobs/sink")
        #expect(requests.map(\.bodyLength) == [size])
        #expect(requests.map(\.body.count) == [0])
        // Another route keeps its body as before.
        _ = try await client.uploadBlob(path: .init(name: "kept"), body: .binary(patternBody(1000, length: .known(1000), iteration: .multiple))).ok
        #expect(store.server.requests(path: "/v1/blobs/kept").map { [$0.bodyLength, $0.body.count] } == [[1000, 1000]])
    }

    @Test("A .multiple body is sent again to a 307's target")
    func multipleBodyFollows307() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        // Nothing buffered: the body is streamed both times.
        let (client, _) = try makeClient(store, configuration: CurlewTransport.Configuration(requestBodyBufferingLimit: 0))
        let receipt = try await client.uploadBlob(path: .init(name: "moved"), body: .binary(patternBody(3 << 20, length: .known(3 << 20), iteration: .multiple))).ok.body.json
        #expect(receipt.bytes == 3 << 20)
        #expect(store.count("PUT /v1/blobs/moved") == 1)
        #expect(store.count("PUT /v1/blobs/target") == 1)
        // The whole body went to both: the redirecting URL and its target.
        #expect(store.server.requests(path: "/v1/blobs/moved").map(\.body.count) == [3 << 20])
        #expect(store.uploads.map(\.bytes) == [3 << 20])
        #expect(store.uploads.allSatisfy { $0.intact })
    }

    @Test("A .single body is never sent twice: a 307 fails with .redirectRefused")
    func singleBodyRefuses307() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let (client, _) = try makeClient(store)
        let error = await #expect(throws: ClientError.self) {
            _ = try await client.uploadBlob(path: .init(name: "moved"), body: .binary(patternBody(1 << 20, length: .known(1 << 20), iteration: .single)))
        }
        #expect(error.flatMap(curlewError(of:))?.code == .redirectRefused)
        #expect(store.count("PUT /v1/blobs/moved") == 1)
        #expect(store.count("PUT /v1/blobs/target") == 0)
    }

    @Test("A .multiple body is retried on 503 by the client's RetryMiddleware")
    func multipleBodyRetriedOn503() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        store.state.withLock { $0.flakyStatuses = [503, 503] }
        let retry = RetryMiddleware(maximumAttempts: 3, baseDelay: .milliseconds(1))
        let (client, _) = try makeClient(store, middleware: [retry], configuration: CurlewTransport.Configuration(requestBodyBufferingLimit: 0))
        let receipt = try await client.uploadBlob(path: .init(name: "flaky"), body: .binary(patternBody(2 << 20, length: .unknown, iteration: .multiple))).ok.body.json
        #expect(receipt.bytes == 2 << 20)
        #expect(store.count("PUT /v1/blobs/flaky") == 3)
        #expect(store.uploads.map(\.bytes) == [2 << 20, 2 << 20, 2 << 20])
        #expect(store.uploads.allSatisfy { $0.intact })
    }

    @Test("A .single body is sent once: the 503 itself reaches the generated client")
    func singleBodyNotRetriedOn503() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        store.state.withLock { $0.flakyStatuses = [503, 503] }
        let retry = RetryMiddleware(maximumAttempts: 3, baseDelay: .milliseconds(1))
        let (client, _) = try makeClient(store, middleware: [retry])
        let output = try await client.uploadBlob(path: .init(name: "flaky"), body: .binary(patternBody(2 << 20, length: .unknown, iteration: .single)))
        guard case .serviceUnavailable = output else {
            Issue.record("expected the 503, got \(output)")
            return
        }
        #expect(store.count("PUT /v1/blobs/flaky") == 1)
    }

    @Test("Retries spent: the last 503 reaches the generated client as a documented response")
    func retriesSpentForwardStatus() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        store.state.withLock { $0.flakyStatuses = [503, 503, 503] }
        let retry = RetryMiddleware(maximumAttempts: 2, baseDelay: .milliseconds(1))
        let (client, _) = try makeClient(store, middleware: [retry])
        let output = try await client.uploadBlob(path: .init(name: "flaky"), body: .binary(HTTPBody("small")))
        guard case .serviceUnavailable = output else {
            Issue.record("expected the 503, got \(output)")
            return
        }
        #expect(store.count("PUT /v1/blobs/flaky") == 2)
    }

    @Test("A middleware of the user's own that declares handledStatuses sees a 503 as the failure it retries, with no transport setting")
    func aUsersMiddlewareDeclaringHandledStatusesRetries() async throws {
        /// Sends again once when the call fails with a 503: the user's own retry.
        struct RetryOnce503: APIMiddleware {
            var capabilities: MiddlewareCapabilities { MiddlewareCapabilities(handledStatuses: [503]) }
            func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
                do {
                    return try await next(request, context)
                } catch let error as CurlewError where error.status?.code == 503 {
                    return try await next(request, context)
                }
            }
        }
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        store.state.withLock { $0.flakyStatuses = [503] }
        let (client, _) = try makeClient(store, middleware: [RetryOnce503()])
        let receipt = try await client.uploadBlob(path: .init(name: "flaky"), body: .binary(HTTPBody("small"))).ok.body.json
        #expect(receipt.bytes == 5)
        #expect(store.count("PUT /v1/blobs/flaky") == 2)
    }

    @Test("A per-operation total timeout fails that operation with .totalTimeout")
    func perOperationTimeout() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.GetPet.id] = OperationPolicy(options: RequestOptions(totalTimeout: .milliseconds(300)))
        let (client, _) = try makeClient(store, configuration: configuration)
        let error = await #expect(throws: ClientError.self) { _ = try await client.getPet(path: .init(petId: 999)) }
        #expect(error.flatMap(curlewError(of:))?.code == .totalTimeout)
        #expect(error.flatMap(curlewError(of:))?.stage == .transport)
        // The other operations keep the client's settings.
        let pets = try await client.listPets().ok.body.json
        #expect(pets.count == 2)
    }

    @Test("A per-operation stall timeout fails a stream that stops sending with .idleTimeout")
    func perOperationStallTimeout() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        var configuration = CurlewTransport.Configuration()
        var stall = RequestOptions()
        stall.idleTimeout = .seconds(2)
        configuration.operations[Operations.StreamEvents.id] = OperationPolicy(options: stall)
        let (client, _) = try makeClient(store, configuration: configuration)
        // The server sends one event, then nothing. Under a heavy load the head itself may come
        // later than the stall timeout: the error kind is the same either way (inside the
        // runtime's ClientError before the head, from the body's iteration after it).
        do {
            let body = try await client.streamEvents().ok.body.textEventStream
            var iterator = body.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first.map { String(decoding: $0, as: UTF8.self) } == "data: {\"pet\":1}\n\n")
            _ = try await iterator.next()
            Issue.record("the stalled stream ended without an error")
        } catch {
            #expect(curlewError(of: error)?.code == .idleTimeout)
        }
    }

    @Test("Cancelling the calling task before the head surfaces CancellationError and closes the connection")
    func cancellationBeforeHead() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let (client, _) = try makeClient(store)
        let task = Task { try await client.getPet(path: .init(petId: 999)) }
        #expect(await eventually { store.server.inFlight(path: "/v1/pets/999") == 1 })
        task.cancel()
        let result = await task.result
        switch result {
        case .success(let output):
            Issue.record("a cancelled call returned \(output)")
        case .failure(let error):
            #expect((error as? ClientError)?.underlyingError is CancellationError)
        }
        #expect(await eventually { store.closedWhileHeld == ["/v1/pets/999"] })
    }

    @Test("Cancelling the reader mid-body throws CancellationError and stops the transfer")
    func cancellationMidBody() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let (client, _) = try makeClient(store)
        let (firstRead, signal) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            let body = try await client.streamEvents().ok.body.textEventStream
            var iterator = body.makeAsyncIterator()
            _ = try await iterator.next()
            signal.yield()
            return try await iterator.next()
        }
        for await _ in firstRead { break }
        task.cancel()
        let result = await task.result
        switch result {
        case .success(let chunk):
            Issue.record("a cancelled read returned \(String(describing: chunk))")
        case .failure(let error):
            #expect(error is CancellationError)
        }
        #expect(await eventually { store.closedWhileHeld == ["/v1/events"] })
    }

    @Test("Dropping the body's iterator before the end stops the transfer, even while the HTTPBody lives")
    func droppedIteratorStopsTransfer() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let (client, _) = try makeClient(store)
        let body = try await client.streamEvents().ok.body.textEventStream
        do {
            var iterator = body.makeAsyncIterator()
            _ = try await iterator.next()
        }
        let stopped = await eventually { store.closedWhileHeld == ["/v1/events"] }
        withExtendedLifetime(body) { #expect(stopped) }
    }

    @Test("An operation with a cache policy is answered from the cache the second time")
    func cacheHit() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        var options = RequestOptions()
        options.cache = .maxAge(.minutes(5))
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.ListPets.id] = OperationPolicy(options: options)
        let recorder = HeadRecorder()
        let (client, _) = try makeClient(store, cache: cache, configuration: configuration, clientMiddlewares: [recorder])
        let first = try await client.listPets().ok.body.json
        let second = try await client.listPets().ok.body.json
        #expect(first == second)
        #expect(first.map(\.id) == [1, 2])
        #expect(store.count("GET /v1/pets") == 1)
        // The stored answer keeps its repeated fields in order too (the cache never stores
        // `Set-Cookie`).
        let heads = recorder.responses.withLock { $0 }
        #expect(heads.count == 2)
        #expect(heads.first?.headerFields[values: .setCookie].count == 2)
        #expect(heads.last?.headerFields[values: .setCookie] == [])
        #expect(heads.last?.headerFields[values: HTTPField.Name("X-Trace")!] == ["first", "second"])
    }

    @Test("A hundred concurrent 401s share one token refresh; every call then succeeds")
    func concurrentRefresh() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let calls = 100
        store.state.withLock { $0.refreshWaitsFor = calls }
        let tokens = TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1"))
        let transport = CurlTransport()
        let refreshURL = store.server.baseURL + "/auth/refresh"
        let refresh = TokenRefreshMiddleware(store: tokens) { _ in
            let raw = try await transport.send(PreparedRequest(method: .post, url: refreshURL, body: Data("R1".utf8)))
            return TokenStore.Credential(accessToken: String(decoding: raw.body, as: UTF8.self))
        }
        let (client, _) = try makeClient(store, middleware: [refresh, AuthorizationMiddleware(store: tokens)])
        let users = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<calls { group.addTask { try await client.getProfile().ok.body.json.user } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(users == Array(repeating: "ana", count: calls))
        let state = store.state.withLock { $0 }
        #expect(state.refreshCalls == 1)
        #expect(state.unauthorizedAnswers == calls)
        #expect(state.okTokens == calls)
        #expect(await tokens.refreshCount == 1)
    }

    @Test("A 401 that stays after the refresh reaches the generated client as the documented 401")
    func unauthorizedForwarded() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        store.state.withLock { $0.validToken = "never" }
        let tokens = TokenStore(credential: .init(accessToken: "T1"))
        let refresh = TokenRefreshMiddleware(store: tokens, maximumAttempts: 2) { _ in .init(accessToken: "T9") }
        let (client, _) = try makeClient(store, middleware: [refresh, AuthorizationMiddleware(store: tokens)])
        let output = try await client.getProfile()
        guard case .unauthorized = output else {
            Issue.record("expected the 401, got \(output)")
            return
        }
        #expect(store.count("GET /v1/me") == 2)
    }

    @Test("A status that ends the session reaches the generated client as the documented response, the session ended")
    func sessionEndingStatusForwarded() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        store.state.withLock { $0.validToken = "never" }
        let tokens = TokenStore(credential: .init(accessToken: "T1"))
        let refresh = TokenRefreshMiddleware(store: tokens, sessionEndedStatuses: [401]) { _ in .init(accessToken: "T9") }
        let (client, _) = try makeClient(store, middleware: [refresh, AuthorizationMiddleware(store: tokens)])
        let output = try await client.getProfile()
        guard case .unauthorized = output else {
            Issue.record("expected the 401, got \(output)")
            return
        }
        #expect(store.count("GET /v1/me") == 1)
        #expect(await tokens.current() == nil, "the session ended: the store is cleared")
    }

    @Test("Events carry the operation id as the request name")
    func eventsNameTheOperation() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let (client, api) = try makeClient(store)
        let events = api.events
        _ = try await client.listPets().ok.body.json
        // The call's last event (it is published before the call returns).
        for await event in events where event.kind == .finished || event.kind == .failed {
            #expect(event.kind == .finished)
            #expect(event.requestName == Operations.ListPets.id)
            break
        }
    }

    @Test("The call's span is named after the operation id, and so is its curlew.request.name")
    func spansNameTheOperation() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let tracer = InMemoryTracer()
        var options = RequestOptions()
        options.instrumentation = CurlewInstrumentation(tracer: tracer)
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.ListPets.id] = OperationPolicy(options: options)
        let (client, _) = try makeClient(store, configuration: configuration)
        _ = try await client.listPets().ok.body.json
        // A streamed call's span ends when its body has been read.
        #expect(await eventually { tracer.finishedSpans.contains { $0.operationName == "listPets" } })
        let span = try #require(tracer.finishedSpans.first { $0.operationName == "listPets" })
        #expect(span.attributes["curlew.request.name"]?.toSpanAttribute() == .string("listPets"))
        #expect(span.kind == .client)
    }

    @Test("A collected body is a .multiple HTTPBody: a middleware reads it and the generated code reads it again")
    func collectedBodyReplays() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.ListPets.id] = OperationPolicy(responseBody: .collect)
        let logger = BodyLogger()
        let (client, _) = try makeClient(store, configuration: configuration, clientMiddlewares: [logger])
        let pets = try await client.listPets().ok.body.json
        #expect(pets.map(\.name) == ["Rex", "Tom"])
        #expect(logger.seen.withLock { $0 } == [.multiple: #"[{"id":1,"name":"Rex","tag":"dog"},{"id":2,"name":"Tom"}]"#])
    }

    @Test("With retries configured, URL-dependent middleware (authorization, signing) still run again for each redirect hop")
    func redirectHopsReachURLDependentMiddleware() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let recorder = URLRecorder()
        let (client, _) = try makeClient(store, middleware: [RetryMiddleware(baseDelay: .milliseconds(1)), recorder])
        let receipt = try await client.uploadBlob(path: .init(name: "moved"), body: .binary(HTTPBody("abc"))).ok.body.json
        #expect(receipt.bytes == 3)
        #expect(recorder.urls.withLock { $0 } == ["/v1/blobs/moved", "/v1/blobs/target"])
    }
}

/// Records the URL of every request it sees; placed among the middleware that depend on the URL
/// (authorization, signing), which run again for every redirect hop.
final class URLRecorder: APIMiddleware, Sendable {
    let urls = Mutex<[String]>([])
    var phase: MiddlewarePhase? { MiddlewarePhase(rank: 450, name: "urlRecorder") }

    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        urls.withLock { $0.append(String(request.url.drop { $0 != "/" }.drop { $0 == "/" }.drop { $0 != "/" })) }
        return try await next(request, context)
    }
}

/// A logging middleware that reads a replayable response body before the generated code does.
final class BodyLogger: ClientMiddleware, Sendable {
    let seen = Mutex<[IterationBehavior: String]>([:])

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, body) = try await next(request, body, baseURL)
        if let body, body.iterationBehavior == .multiple {
            let text = try await String(collecting: body, upTo: 1 << 20)
            seen.withLock { $0[body.iterationBehavior] = text }
        }
        return (response, body)
    }
}
