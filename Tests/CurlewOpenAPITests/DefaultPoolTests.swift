import Curlew
import CurlewOpenAPI
import Foundation
import HTTPTypes
import LoopbackServer
import OpenAPIRuntime
import TestSupport
import Testing

/// The pool is right by default through ``CurlewTransport`` (nothing configured but the test CA):
/// HTTP/2 over TLS multiplexes an engine's operations over one connection, and HTTP/1.1
/// connections to a host follow demand instead of a small fixed cap (AsyncHTTPClient's shared
/// client allows 8 per host).
@Suite("CurlewTransport: the pool by default", .timeLimit(.minutes(2)))
struct DefaultPoolTests {
    static func text(_ transport: CurlewTransport, _ base: URL, _ path: String) async throws -> String {
        let (response, body) = try await transport.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: path), body: nil, baseURL: base, operationID: "probe")
        #expect(response.status == .ok)
        guard let body else { return "" }
        return try await String(collecting: body, upTo: 1 << 16)
    }

    @Test func fortyConcurrentOperationsOverTLSShareOneHTTP2Connection() async throws {
        let environment = TestServers.environment
        let tlsURL = try #require(environment["CURLEW_NGINX_TLS_URL"], "nginx with TLS and HTTP/2 (scripts/connection-servers.sh)")
        let directory = try #require(environment["CURLEW_TLS_DIR"])
        var options = TransferOptions()
        options.connection.tls.trustRoots = .file(directory + "/ca.pem")
        // One engine: each engine keeps connections of its own.
        let curl = CurlTransport(configuration: .init(engineCount: 1))
        let api = APIClient(configuration: ClientConfiguration(baseURL: tlsURL, transferOptions: options), transport: curl)
        let transport = CurlewTransport(client: api)
        let base = try #require(URL(string: tlsURL))
        // nginx answers `/conn` with "<connection serial> <protocol>".
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<40 { group.addTask { try await Self.text(transport, base, "/conn") } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        await curl.shutdown()
        let protocols: Set<String> = Set(answers.map { answer in String(answer.split(separator: " ").last ?? "") })
        let connections: Set<String> = Set(answers.map { answer in String(answer.split(separator: " ").first ?? "") })
        #expect(answers.count == 40)
        #expect(protocols == ["HTTP/2.0"])
        #expect(connections.count == 1, "every operation on one connection: \(connections)")
    }

    @Test func twentyConcurrentOperationsOverHTTP1OpenTwentyConnections() async throws {
        let gate = AsyncGate()
        var router = LoopbackRouter()
        router.on("GET", "/slow") { request, _ in
            await gate.wait()
            return .text("\(request.connectionID)")
        }
        let server = try await LoopbackServer.start(router: router)
        let curl = CurlTransport()
        let transport = CurlewTransport(client: APIClient(baseURL: server.baseURL, transport: curl))
        let base = try #require(URL(string: server.baseURL))
        let calls = Task {
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await Self.text(transport, base, "/slow") } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
        }
        // Every operation is held at the server until all twenty have arrived.
        var arrived = false
        for _ in 0..<1000 where !arrived {
            arrived = server.requestCount == 20
            if !arrived { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(arrived, "all twenty operations in flight at once")
        await gate.open()
        let connections = try await calls.value
        await curl.shutdown()
        await server.shutdown()
        #expect(connections.count == 20)
        #expect(Set(connections).count == 20, "one connection per operation in flight")
    }
}

/// Holds callers until opened.
actor AsyncGate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}
