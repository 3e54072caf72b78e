import Curlew
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// `.onSuccess` means what the caller got: a holding call that throws releases nothing.
@Suite("Holds released on success", .timeLimit(.minutes(1)))
struct HoldOnSuccessDecodingTests {
    struct Session: Decodable, Sendable { var token: String }

    struct Login: Endpoint {
        typealias Response = Session
        var path: String { "login" }
    }

    /// A login answered `200` with a body that is not a session (a captive portal's page) fails
    /// with a decoding error; the calls it held fail with `CancellationError` and are never sent.
    /// They were released as if it had succeeded, and went out without the session.
    @Test func aHoldingCallWhoseBodyDoesNotDecodeCancelsTheHeldCalls() async throws {
        let gate = TestGate()
        try await withLoopback(handler: { request in
            if request.path == "/login" {
                while !gate.isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
                return .text("<html>Sign in to the Wi-Fi</html>")
            }
            return .text("later")
        }) { server, _, transport in
            let holds = RequestHolds()
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [holds]), transport: transport)
            let login = Task { try await client.send(Login()) { $0.holdsLaterRequests = RequestHold(tag: "login", release: .onSuccess) } }
            #expect(await eventually { server.inFlight(path: "/login") == 1 })
            let later = Task { try await client.send(Send(path: "later")) }
            #expect(await eventually { holds.heldCount("login") == 1 })
            gate.open()
            let failure = await #expect(throws: CurlewError.self) { try await login.value }
            #expect(failure?.code == .decodingFailed)
            await #expect(throws: CancellationError.self) { try await later.value }
            #expect(server.requests.map(\.path) == ["/login"])
            #expect(holds.activeTags.isEmpty)
        }
    }
}
