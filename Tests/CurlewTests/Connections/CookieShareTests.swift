@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Testing

/// One cookie jar used by transfers on two engine threads at once: the share handle's locks
/// keep its store whole, and what one engine stores the other sends.
@Suite("Cookie share across engines")
struct CookieShareTests {
    /// `/set/<n>` stores cookie `c<n>=<n>`; every other path echoes the `Cookie` header.
    static let numberedCookies: @Sendable (ServerRequest) async -> ServerResponse = { request in
        guard request.path.hasPrefix("/set/") else { return .text(request.header("Cookie") ?? "") }
        let number = request.path.dropFirst("/set/".count)
        var response = ServerResponse.text("set")
        response.headers.append((name: "Set-Cookie", value: "c\(number)=\(number); Path=/"))
        return response
    }

    @Test func oneJarServesTwoEnginesAtOnce() async throws {
        let server = try await LoopbackServer.start(handler: Self.numberedCookies)
        let transport = CurlTransport(configuration: .init(engineCount: 2))
        var options = ConnectionOptions()
        let jar = CookieJar()
        options.cookies = jar
        let client = connectionClient(server.baseURL, options, transport: transport)
        let engines = transport.engines.engines

        // Four tasks, two on each engine thread, store 25 cookies each at the same time.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask(executorPreference: engines[worker % 2]) {
                    for round in 0..<25 {
                        let answer = try await client.send(TextGet(path: "set/\(worker * 25 + round)"))
                        #expect(answer == "set")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(transport.engines.exchangesStarted == [50, 50])
        #expect(jar.cookies().count == 100)

        // Each engine sends every cookie, whichever engine stored it.
        let expected = Set((0..<100).map { "c\($0)=\($0)" })
        for engine in engines {
            let echoed = try await Task(executorPreference: engine) { try await client.send(TextGet(path: "echo")) }.value
            #expect(Set(echoed.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }) == expected)
        }
        #expect(transport.engines.exchangesStarted == [51, 51])
        await transport.shutdown()
        await server.shutdown()
    }
}
