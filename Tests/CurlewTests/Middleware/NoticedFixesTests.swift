@testable import Curlew
import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Failover, authorization, token refresh and the server clock as a user meets them, against
/// loopback servers.
@Suite("Noticed fixes: failover, auth, refresh, server clock", .timeLimit(.minutes(1)))
struct NoticedFixesTests {
    /// A base URL with its own query (an API key per region) is failed over like any other: the
    /// request goes to the next base URL with that one's query in place of the first one's, the
    /// request's own query after it. It was never matched (the request URL does not start with
    /// the base URL's characters), so the call failed with `.cannotConnect`.
    @Test func aBaseURLWithAQueryIsFailedOverWithTheNextOnesQuery() async throws {
        try await withLoopback(handler: { _ in .text("mirror") }) { mirror, _, transport in
            let primary = refusingBaseURL + "/api?key=EU"
            let failover = FailoverMiddleware(baseURLs: [primary, mirror.baseURL + "/api?key=US"])
            let client = APIClient(configuration: ClientConfiguration(baseURL: primary, middleware: [failover]), transport: transport)
            let answer = try await client.send(Send(path: "items/1", query: [URLQueryItem(name: "x", value: "1")]))
            #expect(answer == "mirror")
            let again = try await client.send(Send(path: "items/2"))
            #expect(again == "mirror")
            #expect(mirror.requests.map(\.uri) == ["/api/items/1?key=US&x=1", "/api/items/2?key=US"])
            #expect(failover.currentBaseURL == mirror.baseURL + "/api?key=US")
        }
    }

    /// The match is by scheme, host, port and path: an absolute URL spelled with an upper-case
    /// scheme and host is under the base URL, and a mirror without a query drops the first one's.
    @Test func failoverMatchesTheOriginAndPathNotTheCharacters() async throws {
        try await withLoopback(handler: { _ in .text("mirror") }) { mirror, _, transport in
            let failover = FailoverMiddleware(baseURLs: ["http://localhost:1/api?key=EU", mirror.baseURL + "/api"])
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: "http://localhost:1/api?key=EU", middleware: [failover]), transport: transport)
            let answer = try await client.send(Send(path: "HTTP://LOCALHOST:1/api/items?key=EU&x=2"))
            #expect(answer == "mirror")
            #expect(mirror.requests.map(\.uri) == ["/api/items?x=2"])
        }
    }

    /// `maximumAttempts` below 1 cannot be honoured (1 is the send alone): it was clamped to 1 in
    /// silence. Token refresh and retry now refuse it, and every call fails unsent.
    @Test(arguments: [0, -2])
    func aMaximumOfAttemptsBelowOneIsRefusedUnsent(_ attempts: Int) async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1"))
            let refresh = TokenRefreshMiddleware(store: store, maximumAttempts: attempts) { $0 }
            let retry = RetryMiddleware(maximumAttempts: attempts)
            for (middleware, name, rule) in [
                (refresh as any APIMiddleware, "TokenRefreshMiddleware", "1 sends once, without a refresh"),
                (retry, "RetryMiddleware", "1 sends once, without a retry"),
            ] {
                let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [middleware]), transport: transport)
                let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "me")) }
                #expect(error?.code == .invalidConnectionSettings)
                #expect(error?.stage == .configuration)
                #expect(error?.message == "\(name).maximumAttempts must be at least 1 (\(rule)), not \(attempts); nothing was sent")
                #expect(error?.request?.description == "GET \(server.baseURL)/me")
            }
            #expect(refresh.maximumAttempts == attempts)
            #expect(server.requestCount == 0)
        }
    }

    /// `RetryMiddleware`'s delays and total time cannot be negative (a negative backoff meant no
    /// backoff at all) and its total time not zero (it meant "never retry" in silence): each is
    /// refused, naming the setting, and every call fails unsent.
    @Test(arguments: [
        (RetryMiddleware(baseDelay: .milliseconds(-5)), "RetryMiddleware.baseDelay must be zero or more, not -0.005 seconds"),
        (RetryMiddleware(maximumDelay: .seconds(-1)), "RetryMiddleware.maximumDelay must be zero or more, not -1.0 seconds"),
        (RetryMiddleware(baseDelay: .seconds(Int64.max)), "RetryMiddleware.baseDelay must be at most 365 days, not 9.223372036854776e+18 seconds"),
        (RetryMiddleware(maximumDelay: .seconds(Int64.max)), "RetryMiddleware.maximumDelay must be at most 365 days, not 9.223372036854776e+18 seconds"),
        (RetryMiddleware(maximumTotalTime: .zero), "RetryMiddleware.maximumTotalTime must be more than zero (set maximumAttempts to 1 for no retry), not 0.0 seconds"),
    ])
    func aRetryDelayOrTotalTimeThatCannotBeHonouredIsRefusedUnsent(_ retry: RetryMiddleware, _ message: String) async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [retry]), transport: transport)
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "me")) }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.stage == .configuration)
            #expect(error?.message == message + "; nothing was sent")
            #expect(server.requestCount == 0)
        }
    }

    /// RFC 7617: a Basic username may not contain `:` (the server splits at the first one and
    /// takes the rest as the password), nor either part a control character (base64 hid it from
    /// the header check). Such a credential fails every call unsent with `.invalidHeader`; the
    /// message does not repeat it. A `:` in the password is allowed and arrives intact.
    @Test func aBasicUsernameWithAColonIsRefusedUnsent() async throws {
        let seen = Mutex<[String]>([])
        try await withLoopback(handler: { request in
            seen.withLock { $0.append(request.header("Authorization") ?? "") }
            return .text("ok")
        }) { server, _, transport in
            let cases = [
                ("ann:admin", "pw", "the Basic username contains ':', which RFC 7617 forbids: the server would take what follows it as the password"),
                ("ann\n", "pw", "the Basic username contains CR, LF, NUL, a tab or another control character, which RFC 7617 forbids"),
                ("ann", "p\u{0}w", "the Basic password contains CR, LF, NUL, a tab or another control character, which RFC 7617 forbids"),
                ("ann", "p\tw", "the Basic password contains CR, LF, NUL, a tab or another control character, which RFC 7617 forbids"),
            ]
            for (username, password, message) in cases {
                let client = APIClient(
                    configuration: ClientConfiguration(
                        baseURL: server.baseURL, middleware: [AuthorizationMiddleware.basic(username: username, password: password)]),
                    transport: transport)
                let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "me")) }
                #expect(error?.code == .invalidHeader)
                #expect(error?.stage == .middleware(.authorization))
                #expect(error?.message == message)
            }
            #expect(server.requestCount == 0)
            let colonInPassword = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [AuthorizationMiddleware.basic(username: "ann", password: "a:b")]),
                transport: transport)
            _ = try await colonInPassword.send(Send(path: "me"))
        }
        #expect(seen.withLock { $0 } == ["Basic " + Data("ann:a:b".utf8).base64EncodedString()])
    }

    /// The server clock learns only from the client's own servers: a third-party origin (an
    /// absolute URL elsewhere, a redirect's target elsewhere) answering with a date years off
    /// taught it that date, and every later timestamp was off by as much; its requests got the
    /// timestamp too, which can break a pre-signed URL.
    @Test func theServerClockIgnoresOtherOriginsAndDoesNotStampThem() async throws {
        let stale = "Sun, 06 Nov 1994 08:49:37 GMT"
        let other = try await LoopbackServer.start { _ in
            ServerResponse(status: 200, headers: [(name: "Date", value: stale)], body: Array("elsewhere".utf8))
        }
        try await withLoopback(handler: { request in
            let ahead = SigningFailoverRetryTests.httpDate(Date().addingTimeInterval(3_600))
            if request.path == "/away" { return ServerResponse(status: 302, headers: [(name: "Location", value: other.baseURL + "/landed"), (name: "Date", value: ahead)], body: []) }
            return ServerResponse(status: 200, headers: [(name: "Date", value: ahead)], body: Array("home".utf8))
        }) { home, _, transport in
            let clock = ServerClock(timestampParameter: "ts")
            let client = APIClient(configuration: ClientConfiguration(baseURL: home.baseURL, middleware: [clock]), transport: transport)
            #expect(try await client.send(Send(path: "a")) == "home")
            #expect(try await client.send(Send(path: other.baseURL + "/direct")) == "elsewhere")
            #expect(try await client.send(Send(path: "away")) == "elsewhere")
            let offset = try #require(clock.currentOffset)
            // An hour ahead, less the whole-second rounding and the time the answers took; the
            // third-party date would make it about −32 years.
            #expect(offset > 3_000 && offset <= 3_601, "offset \(offset)")
            #expect(home.requests.map { $0.queryValue("ts") != nil } == [true, true])
            #expect(other.requests.map(\.uri) == ["/direct", "/landed"])
        }
        await other.shutdown()
    }
}
