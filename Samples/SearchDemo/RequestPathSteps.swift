import Curlew
import Foundation

// The request path: one event model with request ids, a tracker, a streamed body with timings,
// and credentials that never leave the client's own origins.

/// Every subscriber sees every event; a tracker waits for calls that may not have started yet.
struct EventsStep: TourStep {
    let title = "Events with request ids, and a tracker for calls not yet queued"

    func run(with client: APIClient) async throws {
        let events = client.events
        let tracker = RequestTracker()
        for key in ["sunset", "fog", "bird"] {
            let ticket = tracker.ticket()  // taken before the task starts: nothing can slip past
            Task {
                _ = try? await client.send(SearchRequest(key: key)) {
                    $0.queue = "search"; $0.ticket = ticket
                }
            }
        }
        await tracker.waitUntilFinished()
        say("tracker: all 3 calls finished (outstanding: \(tracker.outstanding))")
        var lines: [CallID: [String]] = [:]
        var finished = 0
        for await event in events where event.kind != .progress {
            if let id = event.requestID { lines[id, default: []].append(event.kind.name) }
            if event.kind == .finished { finished += 1 }
            if finished == 3 { break }
        }
        for (id, kinds) in lines.sorted(by: { $0.key < $1.key }) {
            say("\(id): \(kinds.joined(separator: " → "))")
        }
    }
}

/// A body read while it arrives, and libcurl's timings on an ordinary response.
struct StreamingStep: TourStep {
    let title = "Stream an image with back-pressure; timings on every response"

    func run(with client: APIClient) async throws {
        let response = try await client.stream(ImageRequest(path: "images/5.jpg"), highWaterMark: 16 * 1024)
        var chunks = 0
        var bytes = 0
        for try await chunk in response.value {
            chunks += 1
            bytes += chunk.count
        }
        say("GET images/5.jpg as a stream: HTTP \(response.status.code), \(bytes) bytes in \(chunks) chunk(s)")
        let details = try await client.response(for: PictureRequest(id: 5))
        if let metrics = details.metrics {
            say("PictureRequest(id: 5): HTTP/\(metrics.httpVersion), connection reused: \(metrics.reusedConnection), first byte after \(metrics.firstByte), total \(metrics.total), \(metrics.bytesReceived) bytes in")
        }
    }
}

/// The token and the common arguments go to the client's origin only.
struct CredentialsStayHomeStep: TourStep {
    let title = "Credentials stay home: another origin gets no token and no common arguments"

    func run(with client: APIClient) async throws {
        let base = client.configuration.baseURL ?? ""
        // The same server under another name is another origin.
        let otherOrigin = base.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let store = TokenStore(credential: .init(accessToken: "demo-token"))
        let secured = APIClient(
            configuration: ClientConfiguration(
                baseURL: base,
                middleware: [AuthorizationMiddleware(store: store), CommonArgumentsMiddleware(parameters: ["session": "s-1"])]),
            transport: client.transport)
        let home = try await secured.send(CredentialsEcho(path: "echo/credentials"))
        say("to \(base): Authorization \(home.authorization), session \(home.session)")
        let away = try await secured.send(CredentialsEcho(path: otherOrigin + "/echo/credentials"))
        say("to \(otherOrigin): Authorization \(away.authorization), session \(away.session)")
        let trusted = try await secured.send(CredentialsEcho(path: otherOrigin + "/echo/credentials")) { $0.trustedOrigins = [otherOrigin] }
        say("to \(otherOrigin) with options.trustedOrigins: Authorization \(trusted.authorization)")
    }
}

/// `GET /api/echo/credentials` — what the server saw.
struct CredentialsEcho: Endpoint {
    struct Seen: Decodable, Sendable {
        var authorization: String
        var session: String
    }

    typealias Response = Seen
    var path: String
}
