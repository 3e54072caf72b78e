import Curlew
import Foundation

// The observability tour: what a response says about its exchange, the curl command line of a
// request with its secrets redacted, and an upstream failure turned into a status for the
// service's own caller.

/// Timings, HTTP version and connection reuse; a prepared request as `curl`; errors as statuses.
struct ObservabilityStep: TourStep {
    let title = "Observability: timings and reuse, curl command lines, errors as HTTP statuses"

    func run(with client: APIClient) async throws {
        // 1. Every response carries what libcurl measured; a streamed one once its body has ended.
        let first = try await client.response(for: SearchRequest(key: "observability"))
        let second = try await client.response(for: SearchRequest(key: "observability", page: 2))
        for (label, response) in [("page 1", first), ("page 2", second)] {
            guard let metrics = response.metrics else { continue }
            say("\(label): \(Self.describe(metrics))")
        }
        let image = try await client.stream(ImageRequest(path: "images/5.jpg"))
        let bytes = try await image.value.collect(upTo: 1 << 20)
        if let metrics = image.value.metrics {
            say("streamed image, \(bytes.count) bytes, measured when its body ended: \(Self.describe(metrics))")
        }

        // 2. A prepared request as a curl command line: the password and the token are redacted.
        for request in [
            try client.curlDescription(for: LoginRequest(user: "ada", password: "correct horse")),
            try client.curlDescription(for: ProfileRequest(token: "s3cr3t-session-token")),
        ] {
            for line in request.split(separator: "\n") { say(String(line)) }
        }

        // 3. An upstream failure as the status this service answers its own caller with.
        do {
            _ = try await client.send(PictureRequest(id: 404))
        } catch let error as CurlewError {
            say("upstream HTTP \(error.status?.code ?? 0) → answer \(Self.answer(error))")
        }
        let unreachable = APIClient(baseURL: "http://127.0.0.1:9/api", transport: client.transport)
        do {
            _ = try await unreachable.send(SearchRequest(key: "nowhere"))
        } catch let error as CurlewError {
            say("\(error.code) (phase \(error.transportPhase?.name ?? "-")) → answer \(Self.answer(error))")
        }
        let service = TransportService(gracePeriod: .seconds(1))
        await service.shutdown()
        do {
            _ = try await APIClient(baseURL: client.configuration.baseURL ?? "", transport: service).send(SearchRequest(key: "late"))
        } catch let error as CurlewError {
            say("\(error.code) while the service stops → answer \(Self.answer(error))")
        }
    }

    static func describe(_ metrics: TransferMetrics) -> String {
        "HTTP/\(metrics.httpVersion), \(metrics.reusedConnection ? "reused connection" : "new connection"), "
            + "first byte \(milliseconds(metrics.firstByte)), total \(milliseconds(metrics.total)), \(metrics.bytesReceived) bytes in"
    }

    static func answer(_ error: CurlewError) -> String {
        "\(error.serverResponseStatus.code) \"\(error.serverResponseMessage)\""
    }

    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.2f ms", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }
}
