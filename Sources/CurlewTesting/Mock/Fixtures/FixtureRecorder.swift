public import Curlew
internal import Foundation

/// Records real exchanges into fixture files that ``FixtureStore`` replays: the body as
/// `<Name>[.<scenario>].json`, the status and headers (and a transport failure) as
/// `<same>.meta.json` — with secrets redacted.
///
/// ```swift
/// let recorder = try FixtureRecorder(directory: "Tests/Fixtures")
/// let client = APIClient(configuration: ClientConfiguration(baseURL: "https://api.example.com", middleware: [recorder]))
/// _ = try await client.send(SearchRequest(key: "sunset"))        // writes SearchRequest.json (+ .meta.json)
/// ```
///
/// It wraps the transport (phase `MiddlewarePhase.mock`), so it records exactly what the
/// transport returned, before status and envelope checks — error statuses are recorded too.
/// Header values whose names suggest a secret (cookies, authorization, tokens, keys,
/// signatures) and JSON members whose keys contain one of ``redactedFields`` are replaced by
/// `"REDACTED"`; hop-by-hop and per-exchange headers (`Date`, `Content-Length`, `Connection`…)
/// are left out. Streamed and file bodies are not recorded.
public struct FixtureRecorder: APIMiddleware {
    /// The directory written to (its real path).
    public let directory: String
    /// Lower-case fragments of JSON keys whose values are redacted.
    public var redactedFields: Set<String>

    /// The default fragments: token, password, secret, apikey, api_key, authorization, session,
    /// cookie, signature.
    public static let defaultRedactedFields: Set<String> = [
        "token", "password", "secret", "apikey", "api_key", "authorization", "session", "cookie", "signature",
    ]

    /// Creates a recorder writing into an existing directory.
    /// - Throws: `.fixtureNotFound` when the directory does not exist.
    public init(directory: String, redactedFields: Set<String> = FixtureRecorder.defaultRedactedFields) throws(CurlewError) {
        self.directory = try FixturePath.directory(directory)
        self.redactedFields = Set(redactedFields.map { $0.lowercased() })
    }

    /// `fixtureRecorder`.
    public var kind: MiddlewareKind { MiddlewareKind("fixtureRecorder") }
    /// `MiddlewarePhase.mock`.
    public var phase: MiddlewarePhase? { .mock }

    /// Wraps the transport so each exchange is written down.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        var context = context
        context.transport = RecordingTransport(base: context.transport, recorder: self)
        return try await next(request, context)
    }

    /// Writes one exchange (or failure).
    func record(_ outcome: Result<RawResponse, any Error>, context: TransportContext) throws(CurlewError) {
        let scenario = MockScenario.resolve(options: context.options, requestName: context.requestName)
        let bodyName = try FixtureName.file(for: context.requestName, scenario: scenario)
        let metaName = FixtureName.metadataFile(forBody: bodyName)
        var meta: [String: JSONValue] = [:]
        switch outcome {
        case .success(let response):
            guard case .data(let body) = response.content else { return }
            try write(FixtureRedaction.body(body, fields: redactedFields), to: bodyName)
            meta["status"] = .int(response.status.code)
            let headers = FixtureRedaction.headers(response.headers)
            if !headers.isEmpty { meta["headers"] = .object(headers) }
        case .failure(let error):
            guard let error = error as? CurlewError, FixtureMetadata.simulatedFailures.contains(error.code) else { return }
            meta["error"] = .string(error.code.description)
        }
        try write(Data(MockGenerator.text(.object(meta), pretty: true).utf8), to: metaName)
    }

    private func write(_ data: Data, to name: String) throws(CurlewError) {
        do {
            try data.write(to: URL(fileURLWithPath: directory + "/" + name), options: .atomic)
        } catch {
            throw CurlewError(code: .fileNotWritable, message: "could not record the fixture \(name): \(error)", underlying: error)
        }
    }
}

/// The transport a ``FixtureRecorder`` installs: the real one, with each outcome written down.
struct RecordingTransport: Transport {
    let base: any Transport
    let recorder: FixtureRecorder

    nonisolated(nonsending) func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse {
        do {
            let response = try await base.send(request, context: context)
            try recorder.record(.success(response), context: context)
            return response
        } catch {
            if !(error is CancellationError) { try? recorder.record(.failure(error), context: context) }
            throw error
        }
    }
}
