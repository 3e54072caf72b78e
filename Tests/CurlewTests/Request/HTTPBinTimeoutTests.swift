@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import TestSupport
import Testing

/// The timeouts a user switches on, against httpbin (a server nobody here wrote): each its own
/// code, its description naming the timeout and its message the limit. httpbin runs two sync
/// workers, each held for the whole delay or drip even after the client has gone: the delays
/// are short, so the other httpbin tests do not wait long for a worker (nor do the phases here
/// count on one being free at once).
@Suite("Timeout kinds against httpbin", .serialized, .timeLimit(.minutes(1)))
struct HTTPBinTimeoutTests {
    private func client() throws -> APIClient {
        let base = try #require(
            TestServers.environment["CURLEW_HTTPBIN_URL"],
            "CURLEW_HTTPBIN_URL is not set: run scripts/test.sh, which starts httpbin (scripts/httpbin.sh)")
        var configuration = ClientConfiguration(baseURL: base, transferOptions: TimeoutKindTests.generous)
        configuration.deadlineHeader = HTTPField.Name("grpc-timeout")
        return APIClient(configuration: configuration)
    }

    @Test func aDelayedHeadIsAHeadTimeout() async throws {
        let error = await #expect(throws: CurlewError.self) {
            try await client().send(Send(path: "delay/1")) { $0.headTimeout = .milliseconds(300) }
        }
        #expect(error?.code == .headTimeout)
        #expect(error?.message == "no response head began within 300 ms")
        #expect(error?.description.hasPrefix("headTimeout: no response head began within 300 ms (GET ") == true)
    }

    /// `/drip` sends its head and a first byte at once, the second a second later.
    @Test func aDripWithLongPausesIsAnIdleTimeout() async throws {
        let error = await #expect(throws: CurlewError.self) {
            try await client().send(Send(path: "drip", query: [URLQueryItem(name: "duration", value: "2"), URLQueryItem(name: "numbytes", value: "2"), URLQueryItem(name: "delay", value: "0")])) {
                $0.idleTimeout = .milliseconds(300)
            }
        }
        #expect(error?.code == .idleTimeout)
        #expect(error?.message == "no data moved for 300 ms")
        #expect(error?.description.hasPrefix("idleTimeout: no data moved for 300 ms (GET ") == true)
    }

    /// A byte every 100 ms for a second never stalls, and runs past a total timeout of 500 ms.
    @Test func aSteadyDripPastTheTotalTimeoutIsATotalTimeout() async throws {
        let error = await #expect(throws: CurlewError.self) {
            try await client().send(Send(path: "drip", query: [URLQueryItem(name: "duration", value: "1"), URLQueryItem(name: "numbytes", value: "10"), URLQueryItem(name: "delay", value: "0")])) {
                $0.idleTimeout = .seconds(5)
                $0.totalTimeout = .milliseconds(500)
            }
        }
        #expect(error?.code == .totalTimeout)
        #expect(error?.message.hasPrefix("Operation timed out after ") == true)
        #expect(error?.description.hasPrefix("totalTimeout: Operation timed out after ") == true)
    }

    /// The forwarded deadline reaches httpbin under the configured name, with the time left; a
    /// deadline shorter than the server's delay is `.deadlineExceeded`, not a total timeout.
    @Test func theDeadlineReachesHttpbinAndCutsADelayedAnswer() async throws {
        struct Echo: Decodable { var headers: [String: String] }
        let client = try client()
        let echo = try await withDeadline(in: .seconds(30)) {
            try await client.send(Send(path: "anything")).data(using: .utf8).map { try JSONDecoder().decode(Echo.self, from: $0) }
        }
        let left = try #require(echo?.headers["Grpc-Timeout"])
        #expect(left.hasSuffix("m"))
        #expect((1...30_000).contains(Int(left.dropLast()) ?? 0))
        let error = await #expect(throws: CurlewError.self) {
            try await withDeadline(in: .milliseconds(300)) { try await client.send(Send(path: "delay/2")) }
        }
        #expect(error?.code == .deadlineExceeded)
        #expect(error?.stage == .deadline)
    }
}
