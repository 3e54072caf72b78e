import Curlew
import Foundation
import LoopbackServer
import Testing
import TestSupport

@Suite("Connections")
struct ConnectionTests {
    static let numberEcho: @Sendable (ServerRequest) async -> ServerResponse = { request in
        .text(String(request.path.dropFirst("/n/".count)))
    }

    @Test func hundredSequentialRequestsUseOneConnection() async throws {
        try await withLoopback(handler: Self.numberEcho) { server, client, _ in
            for index in 0..<100 {
                let answer = try await client.send(Numbered(index: index))
                #expect(answer == String(index))
            }
            #expect(server.requestCount == 100)
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test func twoHundredConcurrentRequestsAllSucceed() async throws {
        try await withLoopback(handler: { request in
            try? await Task.sleep(for: .milliseconds(5))
            return await Self.numberEcho(request)
        }) { server, client, _ in
            let results = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for index in 0..<200 {
                    group.addTask { (index, try await client.send(Numbered(index: index))) }
                }
                return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
            }
            #expect(results.count == 200)
            #expect(results.allSatisfy { String($0.key) == $0.value })
            #expect(server.requestCount == 200)
            #expect(server.connectionsAccepted <= 200)
        }
    }

    @Test(arguments: [4, 16])
    func concurrentRequestsUseAtMostThatManyConnections(concurrency: Int) async throws {
        try await withLoopback(handler: Self.numberEcho) { server, client, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<concurrency {
                    group.addTask {
                        for round in 0..<20 {
                            let index = worker * 100 + round
                            let answer = try await client.send(Numbered(index: index))
                            #expect(answer == String(index))
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(server.requestCount == concurrency * 20)
            #expect(server.connectionsAccepted <= concurrency)
        }
    }

    @Test func perHostLimitCapsConnections() async throws {
        try await withLoopback(
            transportConfiguration: .init(maximumConnectionsPerHost: 2),
            handler: { request in
                try? await Task.sleep(for: .milliseconds(2))
                return await Self.numberEcho(request)
            }
        ) { server, client, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<40 {
                    group.addTask { _ = try await client.send(Numbered(index: index)) }
                }
                try await group.waitForAll()
            }
            #expect(server.requestCount == 40)
            #expect(server.connectionsAccepted <= 2)
            #expect(server.peakInFlight(path: "/n/0") <= 1)
        }
    }

    @Test func connectionRefused() async throws {
        let transport = CurlTransport()
        let client = APIClient(baseURL: refusingBaseURL, transport: transport)
        let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
        #expect(error?.code == .cannotConnect)
        #expect(error?.level == .transport)
        await transport.shutdown()
    }

    @Test func unresolvableHostIsADNSFailure() async throws {
        let transport = CurlTransport()
        // `.invalid` is reserved (RFC 2606) and never resolves; no packet leaves the machine
        // beyond the local resolver.
        let client = APIClient(baseURL: "http://curlew-test.invalid", transport: transport)
        let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
        #expect(error?.code == .dnsFailure)
        await transport.shutdown()
    }
}
