internal import Foundation

/// Sends ``Request`` values and returns their typed responses.
///
/// ```swift
/// let client = Client(baseURL: "https://gallery.example.com/api")
/// let results = try await client.send(SearchRequest(key: "sunset"))
/// let full = try await client.response(for: SearchRequest(key: "sunset"))
/// print(full.status, full.headers[.contentType] ?? "", full.body.count)
/// ```
///
/// `Client` is an actor so the state later features need (credentials, queues, cache, events)
/// has one owner; its configuration is a `nonisolated let`, and preparing, transferring and
/// decoding run outside the actor's isolation, so concurrent sends never wait for each other.
public actor Client {
    /// The configuration this client was created with.
    public nonisolated let configuration: ClientConfiguration
    /// The transport every request goes through.
    public nonisolated let transport: any Transport

    /// Creates a client.
    /// - Parameters:
    ///   - configuration: Base URL, default headers, transfer options, coders.
    ///   - transport: Defaults to the process-wide ``CurlTransport/shared``.
    public init(configuration: ClientConfiguration, transport: any Transport = CurlTransport.shared) {
        self.configuration = configuration
        self.transport = transport
    }

    /// Creates a client with a base URL and default configuration otherwise.
    public init(baseURL: String, transport: any Transport = CurlTransport.shared) {
        self.init(configuration: ClientConfiguration(baseURL: baseURL), transport: transport)
    }

    /// Sends a request and returns its decoded response.
    /// - Throws: ``CurlewError``: `.invalidRequest` before anything is sent, `.transport` when the
    ///   exchange fails, `.httpStatus` when ``Request/accepts(_:)`` refuses the status,
    ///   `.dataFormat` when decoding fails, `.cancelled` when the task is cancelled.
    public nonisolated func send<R: Request>(_ request: R) async throws -> R.Response {
        try await response(for: request).value
    }

    /// Sends a request and returns the decoded value with status, headers, raw body and source.
    /// - Throws: The same errors as ``send(_:)``.
    public nonisolated func response<R: Request>(for request: R) async throws -> ClientResponse<R.Response> {
        let prepared = try prepare(request)
        let raw: RawResponse
        do {
            raw = try await transport.send(prepared)
        } catch let error as CurlewError {
            throw error
        } catch is CancellationError {
            throw CurlewError(code: .cancelled, message: "the request was cancelled", request: prepared.summary, underlying: CancellationError())
        } catch {
            throw CurlewError(code: .transportFailure, message: "\(error)", request: prepared.summary, underlying: error)
        }
        guard request.accepts(raw.status) else {
            throw CurlewError(
                code: .unacceptableStatus,
                message: "unacceptable status \(raw.status.code)",
                request: prepared.summary,
                status: raw.status,
                headers: raw.headers,
                bodySnippet: CurlewError.snippet(of: raw.body)
            )
        }
        let value = try decode(request, raw, summary: prepared.summary)
        return ClientResponse(value: value, raw: raw)
    }

    private nonisolated func decode<R: Request>(_ request: R, _ raw: RawResponse, summary: RequestSummary) throws -> R.Response {
        do {
            try request.didReceive(raw)
        } catch let error as CurlewError {
            throw completed(error, summary: summary, raw: raw)
        } catch {
            throw CurlewError(
                code: .serverError, message: "\(error)", request: summary, status: raw.status,
                headers: raw.headers, bodySnippet: CurlewError.snippet(of: raw.body), underlying: error)
        }
        do {
            return try request.decode(raw, decoder: configuration.decoder)
        } catch let error as CurlewError {
            throw completed(error, summary: summary, raw: raw)
        } catch let error as DecodingError {
            let explained = DecodingFailure(error, body: raw.body)
            throw CurlewError(
                code: explained.code,
                message: explained.message,
                request: summary,
                status: raw.status,
                headers: raw.headers,
                bodySnippet: CurlewError.snippet(of: raw.body),
                dataPath: explained.path,
                underlying: error
            )
        } catch {
            throw CurlewError(
                code: .decodingFailed, message: "\(error)", request: summary, status: raw.status,
                headers: raw.headers, bodySnippet: CurlewError.snippet(of: raw.body), underlying: error)
        }
    }

    /// Fills in what an error thrown by a request hook could not know: request, status, headers,
    /// body snippet.
    private nonisolated func completed(_ error: CurlewError, summary: RequestSummary, raw: RawResponse) -> CurlewError {
        var error = error
        if error.request == nil { error.request = summary }
        if error.status == nil { error.status = raw.status }
        if error.headers == nil { error.headers = raw.headers }
        if error.bodySnippet == nil { error.bodySnippet = CurlewError.snippet(of: raw.body) }
        return error
    }
}
