import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import Synchronization
import Testing
import TestSupport

/// A transport written by a user: records what it is told, echoes a streamed body back as a
/// streamed response, and answers 503 to paths starting with `/busy`.
final class EchoStreamTransport: Transport {
    let contexts = Mutex<[TransportContext]>([])
    let urls = Mutex<[String]>([])

    func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse {
        // Recorded without the client's transport (this object) that `context` carries: keeping
        // it would make the transport own itself, and LeakSanitizer reports the cycle.
        let recorded = TransportContext(
            requestID: context.requestID, requestName: context.requestName, attempt: context.attempt,
            identity: context.identity, responseBody: context.responseBody, options: context.options,
            events: context.events)
        contexts.withLock { $0.append(recorded) }
        urls.withLock { $0.append(request.url) }
        if request.url.contains("/busy") { return RawResponse(status: .serviceUnavailable, url: request.url) }
        var received = Data()
        switch request.content {
        case .stream(let stream)?:
            for try await chunk in stream.makeChunks() { received.append(chunk) }
        case .data(let data)?:
            received = data
        default:
            break
        }
        return RawResponse(status: .ok, content: .stream(ResponseBodyStream(data: received)), url: request.url)
    }
}

struct Upload: Endpoint {
    typealias Response = Data
    var method: HTTPRequest.Method { .post }
    var path: String
    var body: RequestPayload?
}

@Suite("A transport with context")
struct TransportContextTests {
    @Test func aCustomTransportReceivesIdNameAttemptAndIdentity() async throws {
        let transport = EchoStreamTransport()
        let client = APIClient(
            configuration: ClientConfiguration(
                baseURL: "https://api.test",
                middleware: [
                    SigningMiddleware(secret: "s", timestampParameter: "ts"),
                    RetryMiddleware(maximumAttempts: 2, baseDelay: .milliseconds(1), maximumDelay: .milliseconds(1)),
                ]),
            transport: transport)
        _ = try? await client.send(Send(path: "busy", query: [URLQueryItem(name: "key", value: "fog"), URLQueryItem(name: "lat", value: "1.5")])) {
            $0.volatileParameters = ["lat"]
        }
        let contexts = transport.contexts.withLock { $0 }
        #expect(contexts.map(\.attempt) == [1, 2])
        #expect(contexts.map(\.requestName) == ["Send", "Send"])
        #expect(Set(contexts.map(\.requestID)).count == 1, "one call, one id across attempts")
        let identity = try #require(contexts.first?.identity)
        #expect(identity.url == "https://api.test/busy?key=fog", "no volatile parameter, no ts, no sign")
        #expect(identity.key == "GET https://api.test/busy?key=fog")
        #expect(identity.name == "Send")
        #expect(transport.urls.withLock { $0 }.allSatisfy { $0.contains("sign=") }, "the wire request was signed")
    }

    @Test func aCustomTransportStreamsABodyInAndOut() async throws {
        let transport = EchoStreamTransport()
        let client = APIClient(baseURL: "https://api.test", transport: transport)
        let payload = Data((0..<1000).map { UInt8($0 % 251) })
        let chunks = AsyncThrowingStream<Data, any Error> { continuation in
            for start in stride(from: 0, to: payload.count, by: 100) { continuation.yield(payload[start..<min(start + 100, payload.count)]) }
            continuation.finish()
        }
        let response = try await client.stream(Upload(path: "echo", body: .stream(.once(length: Int64(payload.count), chunks))))
        #expect(response.status == .ok)
        var echoed = Data()
        for try await chunk in response.value { echoed.append(chunk) }
        #expect(echoed == payload)
        #expect(transport.contexts.withLock { $0 }.first?.responseBody == .stream())
    }

    @Test func aOneShotBodyIsNeverResent() async throws {
        let transport = EchoStreamTransport()
        let client = APIClient(
            configuration: ClientConfiguration(
                baseURL: "https://api.test",
                middleware: [
                    RetryMiddleware(maximumAttempts: 3, baseDelay: .milliseconds(1), retryableMethods: [.post])
                ]),
            transport: transport)
        let once = RequestBodyStream.once(
            length: 2,
            AsyncThrowingStream<Data, any Error> {
                $0.yield(Data([1, 2])); $0.finish()
            })
        let error = await #expect(throws: CurlewError.self) { try await client.send(Upload(path: "busy", body: .stream(once))) }
        #expect(error?.status?.code == 503)
        #expect(transport.contexts.withLock { $0.count } == 1)

        let replayable = RequestBodyStream(length: 2) {
            AsyncThrowingStream<Data, any Error> {
                $0.yield(Data([1, 2])); $0.finish()
            }
        }
        _ = try? await client.send(Upload(path: "busy", body: .stream(replayable)))
        #expect(transport.contexts.withLock { $0.count } == 4, "a replayable stream is retried: 1 + 3 attempts")
    }

    @Test func aFileBodyThatCannotBeReadFailsBeforeSending() async throws {
        let transport = MockTransport { .text("ok", for: $0) }
        let client = APIClient(baseURL: "https://api.test", transport: transport)
        for path in ["/nonexistent/curlew-upload", "/tmp"] {
            let error = await #expect(throws: CurlewError.self) { try await client.send(Upload(path: "up", body: .file(path: path))) }
            #expect(error?.code == .fileUnreadable)
            #expect(error?.stage == .prepare)
        }
        #expect(transport.requests.isEmpty)
    }
}
