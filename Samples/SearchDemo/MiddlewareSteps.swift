import Curlew
import Foundation
import HTTPTypes

// The middleware tour. Each step builds its own client around the tour's transport and base URL:
//
//     APIClient(configuration: ClientConfiguration(baseURL: …, accessories: [TerminalHUD()],
//                                               middleware: [outermost, …, innermost]),
//            transport: client.transport)

/// Every request signed by a middleware; the demo server recomputes the MD5 and refuses anything
/// that does not match.
struct SigningStep: TourStep {
    let title = "Middleware: sign every request (MD5 over the sorted parameters + secret)"

    func run(with client: APIClient) async throws {
        let signing = SigningMiddleware(secret: "123456", algorithm: .md5, output: .parameter("sign"), timestampParameter: "ts")
        let signed = APIClient(
            configuration: ClientConfiguration(baseURL: client.configuration.baseURL, accessories: [TerminalHUD()], middleware: [signing]),
            transport: client.transport)

        let receipt = try await signed.send(OrderRequest(item: "print", quantity: 2)).data
        say(#"OrderRequest(item: "print", quantity: 2) went out with ts and sign added"#)
        say("server: md5(\"\(receipt.canonical)\" + secret) = \(receipt.sign.prefix(12))… matches → \(receipt.quantity) × \(receipt.item) accepted")

        // A request's own middleware run inside the client's, so this one changes the query
        // after it was signed, like someone on the wire would.
        let order = OrderRequest(item: "print", quantity: 2)
        let tampered = try await rejection(of: order, by: signed) { $0.middleware = [QueryTamperer(from: "qty=2", to: "qty=200")] }
        say("changed after signing (qty=2 → qty=200): \(tampered)")
        let unsigned = try await rejection(of: order, by: signed) { $0.skippedMiddleware = [.signing] }
        say("sent with options.skippedMiddleware = [.signing]: \(unsigned)")
    }

    /// How the server refused `request` sent with adjusted options; throws if it was accepted.
    private func rejection(of request: OrderRequest, by client: APIClient, options: (inout RequestOptions) -> Void) async throws -> String {
        do {
            _ = try await client.send(request, options: options)
        } catch let error as CurlewError where error.code == .unacceptableStatus {
            return "HTTP \(error.status?.code ?? 0) \(error.bodySnippet ?? "")"
        }
        throw TourExpectationFailed(description: "the server accepted a request it should have refused")
    }
}

/// One envelope for every response: success unwraps to the payload, any other code is an error.
struct EnvelopeStep: TourStep {
    let title = #"One {"code", "msg", "data"} envelope for a family of endpoints"#

    func run(with client: APIClient) async throws {
        let enveloped = APIClient(
            configuration: ClientConfiguration(
                baseURL: client.configuration.baseURL,
                accessories: [TerminalHUD()]),
            transport: client.transport)

        let picture = try await enveloped.send(GalleryPictureRequest(id: 5))
        say("GalleryPictureRequest(id: 5) → PictureDetails, no envelope type needed: \(picture.title) by \(picture.author)")
        do {
            _ = try await enveloped.send(GalleryPictureRequest(id: 6))
            throw TourExpectationFailed(description: "a private picture was returned")
        } catch let error as CurlewError {
            say("GalleryPictureRequest(id: 6), HTTP \(error.status?.code ?? 0) with code 1001 → level .\(error.level), businessCode \(error.businessCode ?? "-"), message \"\(error.message)\"")
        }
        let raw = try await enveloped.send(RawGalleryPictureRequest(id: 6))
        say("RawGalleryPictureRequest (no envelope in its type) → no error, the raw body: \(raw)")
    }
}

/// An expired access token: the server says 401, one refresh (sent straight through the
/// transport, not the client), then the request is resent with the new token.
struct TokenRefreshStep: TourStep {
    let title = "Middleware: an expired token is refreshed once and the request resent"

    func run(with client: APIClient) async throws {
        let base = client.configuration.baseURL ?? ""
        let transport = client.transport
        let expired = TokenStore.Credential(accessToken: "access-v1", refreshToken: "refresh-ines")
        let store = TokenStore(credential: expired)
        let notes = Notes()  // what the refresher did, printed after each send (not over the HUD's line)

        // The refresher posts the refresh token with the captured transport: the refresh request
        // bypasses the middleware chain (no Authorization header, no recursion into a refresh).
        let refresher: @Sendable (TokenStore.Credential) async throws -> TokenStore.Credential = { credential in
            let token = credential.refreshToken?.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let request = PreparedRequest(
                method: .post, url: base + "/auth/refresh",
                headers: [.contentType: "application/x-www-form-urlencoded"], body: Data("refresh_token=\(token)".utf8))
            let response = try await transport.send(request)
            guard response.status.code == 200, let access = try response.json(at: "data.access_token").stringValue else {
                throw CurlewError(code: .refreshFailed, message: "refresh answered HTTP \(response.status.code)", status: response.status)
            }
            let sawAuthorization = try? response.json(at: "data.saw_authorization").boolValue
            await notes.add("refresher: POST auth/refresh via the transport → \(access) (server saw an Authorization header: \(sawAuthorization.map(String.init) ?? "?"))")
            return TokenStore.Credential(accessToken: access, refreshToken: credential.refreshToken)
        }
        let secured = APIClient(
            configuration: ClientConfiguration(
                baseURL: base,
                accessories: [TerminalHUD()],
                middleware: [
                    // Registered in the "wrong" order on purpose: built-ins are placed by phase,
                    // so refresh still runs outside authorization and each resend gets a fresh header.
                    AuthorizationMiddleware(store: store),
                    TokenRefreshMiddleware(store: store, refresher: refresher),
                ]),
            transport: transport)
        let refreshed = Task { () -> Int? in
            for await event in secured.events where event.kind == .credentialRefreshed {
                return event.credentialVersion
            }
            return nil
        }

        say("TokenStore starts with access-v1, which the server no longer accepts")
        let account = try await secured.send(AccountRequest())
        for line in await notes.take() { say("  " + line) }
        say("GET secure/me → 401 → refresh → resent: hello \(account.user), answered for \(account.token)")
        say("server refreshes so far: \(account.refreshes); TokenStore version \(await store.version), refreshCount \(await store.refreshCount)")
        let event = await value(of: refreshed, within: .seconds(2))
        say("client.events: \(event.map { ".credentialRefreshed(version: \($0))" } ?? "nothing within 2 s")")

        // Concurrent requests failing with the same token share a single refresh.
        await store.update(expired)
        say("the store gets access-v1 again (version \(await store.version)); three requests at once:")
        let batch = await secured.batch([AccountRequest(), AccountRequest(), AccountRequest()])
        for line in await notes.take() { say("  " + line) }
        let refreshes = batch.values.map(\.refreshes).max() ?? 0
        say("\(batch.values.count) of 3 succeeded with \(Set(batch.values.map(\.token)).sorted().joined(separator: ", ")); server refreshes so far: \(refreshes) (one for the whole batch)")
    }
}

/// The server's clock, learnt from the `Date` header of each response.
struct ServerClockStep: TourStep {
    let title = "Middleware: the server's clock from its Date header"

    func run(with client: APIClient) async throws {
        let clock = ServerClock()
        let timed = APIClient(
            configuration: ClientConfiguration(baseURL: client.configuration.baseURL, accessories: [TerminalHUD()], middleware: [clock]),
            transport: client.transport)
        say("before any response, serverTime() − now = \(Self.minutes(timed.serverTime().timeIntervalSinceNow)) min")
        _ = try await timed.send(ClockRequest())
        say("after GET secure/clock (its Date header is an hour ahead): serverTime() − now = \(Self.minutes(timed.serverTime().timeIntervalSinceNow)) min")
    }

    private static func minutes(_ seconds: TimeInterval) -> String {
        let minutes = Int((seconds / 60).rounded())
        return minutes > 0 ? "+\(minutes)" : String(minutes)
    }
}

/// A primary base URL nobody listens on, and a secondary that works.
struct FailoverStep: TourStep {
    let title = "Middleware: fail over from an unreachable primary to a secondary base URL"

    func run(with client: APIClient) async throws {
        guard let secondary = client.configuration.baseURL else { return say("no base URL to fail over to") }
        let primary = "http://127.0.0.1:1/api"  // a closed port: the connection is refused
        let failover = FailoverMiddleware(baseURLs: [primary, secondary])
        let resilient = APIClient(
            configuration: ClientConfiguration(baseURL: primary, accessories: [TerminalHUD()], middleware: [failover]),
            transport: client.transport)
        say("base URLs: \(primary) (closed port), then \(secondary)")
        let page = try await resilient.send(SearchRequest(key: "fog")).data
        say("SearchRequest(key: \"fog\") → \(page.total) picture(s), \(page.pictures.map(\.title).joined(separator: ", "))")
        say("now using \(failover.currentBaseURL ?? "?") until it fails in turn")
    }
}

/// Changes the URL after the client's middleware (signing) handled it: a stand-in for someone
/// tampering with the request on the way.
struct QueryTamperer: APIMiddleware {
    var from: String
    var to: String

    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        var request = request
        try request.setURL(request.url.replacingOccurrences(of: from, with: to))
        return try await next(request, context)
    }
}

/// Lines collected while a request runs, to print once it is done.
actor Notes {
    private var lines: [String] = []

    func add(_ line: String) { lines.append(line) }

    func take() -> [String] {
        defer { lines = [] }
        return lines
    }
}

/// A step saw something other than what it demonstrates.
struct TourExpectationFailed: Error, CustomStringConvertible {
    var description: String
}

/// `task`'s value, or `nil` once `timeout` has passed (the task is cancelled then).
func value<T: Sendable>(of task: Task<T?, Never>, within timeout: Duration) async -> T? {
    let watchdog = Task {
        try? await Task.sleep(for: timeout)
        task.cancel()
    }
    defer { watchdog.cancel() }
    return await task.value
}
