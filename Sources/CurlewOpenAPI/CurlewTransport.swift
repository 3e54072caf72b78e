public import Curlew
public import Foundation
public import HTTPTypes
public import OpenAPIRuntime

/// A swift-openapi-runtime `ClientTransport` that sends every generated operation through an
/// `APIClient`, so the client's middleware — authorization and single-flight token
/// refresh, signing, retries, the response cache, queues, events, metrics and spans — applies to
/// generated calls as it does to hand-written endpoints.
///
/// ```swift
/// let api = APIClient(configuration: ClientConfiguration(baseURL: "https://api.example.com/v1", middleware: [RetryMiddleware()]))
/// var configuration = CurlewTransport.Configuration()
/// var export = RequestOptions()
/// export.idleTimeout = .seconds(20)                   // the stall timeout
/// configuration.operations["downloadExport"] = OperationPolicy(options: export)
/// let client = Client(serverURL: try Servers.Server1.url(), transport: CurlewTransport(client: api, configuration: configuration))
/// ```
///
/// **Bodies.** A request body of unknown length, or longer than
/// ``Configuration/requestBodyBufferingLimit``, is pulled from its `HTTPBody` while it is sent
/// (libcurl's read callback pauses while the body has nothing new); a shorter one of known
/// length is read into memory first when it can be iterated again (`.multiple`), and so is a
/// `.multiple` JSON or form body of any known length when a `SigningMiddleware` or
/// `CommonArgumentsMiddleware` applies (they read and add to its members). A response
/// body is an `HTTPBody` (`.single`) fed from Curlew's bounded buffer: the transfer pauses while
/// more than ``OperationPolicy/ResponseBodyHandling/stream(highWaterMark:)`` bytes are unread.
/// Operations whose ``OperationPolicy/options`` ask for the cache (`RequestOptions.cache`
/// other than `.networkOnly`), or that choose ``OperationPolicy/ResponseBodyHandling/collect``,
/// receive the whole body instead, as a `.multiple` `HTTPBody` — a cached answer looks exactly
/// like a network one.
///
/// **Replays.** A body the runtime marks `.multiple` is sent again for a retry, a token refresh
/// and a `307`/`308` redirect. A `.single` body is sent at most once: a retryable status
/// (`503`…) or a `401` reaches the generated client as that response, and a `307`/`308` fails
/// the call with a `CurlewError` of code `.redirectRefused` (inside the runtime's
/// `ClientError`).
///
/// **Headers.** Every request field is sent in order, repeated names included (a field the
/// generated request sets replaces the client's default of that name); `Content-Length` and
/// `Transfer-Encoding` are left to the transport, which frames the body itself. Every response
/// field reaches the generated client in the order received, so two `Set-Cookie` lines stay two.
///
/// **Statuses.** Every status is an answer, not an error: the generated client decides. The
/// statuses that the client's middleware act on (`MiddlewareCapabilities.handledStatuses`:
/// `RetryMiddleware`, `TokenRefreshMiddleware`, the operation's own included) are shown to them as errors first, so they retry or
/// refresh; when their attempts are spent, the last answer reaches the generated client as it
/// came (``Configuration/middlewareStatuses``).
///
/// **Errors.** A failure is thrown as Curlew threw it: a `CurlewError` with its
/// `CurlewError.stage` and `CurlewError.code` (a connect timeout, a stall and a
/// total timeout are three codes), which the runtime wraps in `ClientError` as its
/// `underlyingError`. Cancelling the calling task surfaces as `CancellationError` (wrapped the
/// same way), never as a response; reading a body after a cancellation throws
/// `CancellationError`, and dropping the body's iterator before its end stops the transfer.
public struct CurlewTransport: ClientTransport {
    /// The client every operation is sent through: its middleware, queues, cache and events apply.
    ///
    /// Give it the OpenAPI server's URL as its base URL (or list the server's origin in
    /// `ClientConfiguration.trustedOrigins`): credentials, signatures and common arguments
    /// go only to trusted origins.
    public let client: APIClient
    /// Per-operation policy and the transport's limits.
    public var configuration: Configuration

    /// Creates a transport.
    /// - Parameters:
    ///   - client: The client to send through.
    ///   - configuration: Per-operation policy; the default sends every operation with the
    ///     client's own settings, streaming response bodies.
    public init(client: APIClient, configuration: Configuration = Configuration()) {
        self.client = client
        self.configuration = configuration
    }

    /// Sends one operation's request through ``client`` and returns the response head at once,
    /// with the body still arriving (or collected, see ``OperationPolicy/ResponseBodyHandling``).
    /// - Parameters:
    ///   - request: The generated request; its `path` holds the percent-encoded path and query.
    ///   - body: The request body, or `nil`.
    ///   - baseURL: The server URL the generated client was created with.
    ///   - operationID: The operation's identifier: it picks the ``OperationPolicy`` and names
    ///     the call's events, log lines, metrics and spans.
    /// - Returns: The response head and body (`nil` for `HEAD`).
    /// - Throws: `CurlewError` when the exchange fails, `CancellationError` when the
    ///   calling task is cancelled.
    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let policy = configuration.policy(for: operationID)
        let url = try Self.url(of: request, baseURL: baseURL)
        let summary = RequestSummary(method: request.method, url: url, secretKeyFragments: client.configuration.secretQueryKeyFragments)
        try Self.checkSendable(url, baseURL: baseURL, request: summary)
        let readsParameters = body != nil && Self.hasParameterBody(request.headerFields) && Self.parameterMiddlewareApplies(client: client, options: policy.options)
        let content = try await requestContent(body, request: summary, inMemory: readsParameters)
        var options = policy.options
        options.requestName = operationID
        let statuses = configuration.middlewareStatuses ?? Self.statusesHandledByMiddleware(client: client, options: options)
        if !statuses.isEmpty { options.middleware.append(StatusGate(statuses: statuses)) }
        let endpoint = OperationEndpoint(
            method: request.method, url: url, fields: request.headerFields, content: content, options: options)
        let isHead = request.method == .head
        do {
            guard let highWaterMark = policy.responseBody.streamingHighWaterMark(cache: options.cache) else {
                let response = try await client.response(for: endpoint)
                // Cancelled while the answer came in: still a cancellation, never a success.
                try Task.checkCancellation()
                let head = HTTPResponse(status: response.status, headerFields: response.headers)
                return (head, isHead ? nil : HTTPBody(response.body))
            }
            let response = try await client.stream(endpoint, highWaterMark: highWaterMark)
            if Task.isCancelled {
                response.value.cancel()
                throw CancellationError()
            }
            let head = HTTPResponse(status: response.status, headerFields: response.headers)
            guard !isHead else {
                response.value.cancel()
                return (head, nil)
            }
            let length = Self.length(of: response.headers, status: response.status)
            let limit = options.maximumBodySize.map { ResponseBodyLimit(bytes: $0, request: summary) }
            // A body announced longer than the operation's limit fails the call, as it does
            // when collected: the head never reaches the generated client.
            if let limit, limit.refuses(length) {
                response.value.cancel()
                throw limit.exceeded
            }
            // A body that arrived whole with its head (a small answer, usually) is handed over
            // as one chunk: nothing to wait for chunk by chunk. Its length is still the one the
            // head announced, so the body looks the same however fast it came.
            if let whole = response.value.buffer.takeWholeIfEnded() {
                if let limit, whole.count > limit.bytes { throw limit.exceeded }
                return (head, HTTPBody(whole, length: length, iterationBehavior: .single))
            }
            let body = HTTPBody(ResponseChunks(stream: response.value, limit: limit), length: length, iterationBehavior: .single)
            return (head, body)
        } catch let error as CurlewError {
            guard let forwarded = ForwardedResponse.find(in: error) else { throw error }
            try Task.checkCancellation()
            return try forwarded.converted(isHead: isHead, limit: options.maximumBodySize.map { ResponseBodyLimit(bytes: $0, request: summary) })
        }
    }

    // MARK: Request

    /// The absolute URL: the base URL's path followed by the request's path and query, both
    /// already percent-encoded by the generated code (the way the other transports join them).
    static func url(of request: HTTPRequest, baseURL: URL) throws(CurlewError) -> String {
        let baseText = baseURL.absoluteString
        if let joined = joined(base: baseText, path: request.path ?? "") { return joined }
        guard var base = URLComponents(string: baseText), let relative = URLComponents(string: request.path ?? "") else {
            throw CurlewError(
                code: .malformedURL, message: "the request path \(request.path ?? "<nil>") cannot be joined to the base URL \(baseURL.absoluteString)")
        }
        var basePath = base.percentEncodedPath
        if basePath.hasSuffix("/"), relative.percentEncodedPath.hasPrefix("/") { basePath.removeLast() }
        base.percentEncodedPath = basePath + relative.percentEncodedPath
        base.percentEncodedQuery = relative.percentEncodedQuery
        guard let url = base.string else {
            throw CurlewError(
                code: .malformedURL, message: "the request path \(request.path ?? "<nil>") cannot be joined to the base URL \(baseURL.absoluteString)")
        }
        return url
    }

    /// Fails unless `url` is an absolute http or https URL with a host, with the error the
    /// `APIClient` would give (`.unsupportedScheme`, `.malformedURL`) but naming `url` itself:
    /// the client would take a URL that is not http(s) for a path and name it after its own base
    /// URL. Looks at the first few bytes only.
    static func checkSendable(_ url: String, baseURL: URL, request: RequestSummary) throws(CurlewError) {
        func failure(_ code: CurlewError.Code, _ message: String) -> CurlewError {
            var error = CurlewError(code: code, message: message, request: request)
            error.stage = .prepare
            return error
        }
        // ASCII letters compared without case (`| 0x20` leaves `:` and `/` as they are).
        func starts(with prefix: String) -> Bool { url.utf8.starts(with: prefix.utf8) { $0 | 0x20 == $1 } }
        let schemeLength: Int
        if starts(with: "http://") {
            schemeLength = 7
        } else if starts(with: "https://") {
            schemeLength = 8
        } else if let scheme = baseURL.scheme, !["http", "https"].contains(scheme.lowercased()) {
            throw failure(.unsupportedScheme, "the server URL's scheme \"\(scheme)\" is not supported; use http or https")
        } else {
            throw failure(.malformedURL, "the server URL \(baseURL.absoluteString) is not an absolute http or https URL")
        }
        guard let first = url.utf8.dropFirst(schemeLength).first, ![UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#")].contains(first) else {
            throw failure(.malformedURL, "the server URL \(baseURL.absoluteString) has no host")
        }
    }

    /// `base` followed by `path` as text, in the usual case — a base URL with neither query nor
    /// fragment, and an absolute path (and query) of URL characters with well-formed
    /// percent-escapes, which the generated code produces — where the two `URLComponents` round
    /// trips above would give the same string; `nil` otherwise.
    static func joined(base: String, path: String) -> String? {
        guard path.utf8.first == UInt8(ascii: "/"), !base.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }),
            isPlainPathAndQuery(path.utf8)
        else { return nil }
        return base.utf8.last == UInt8(ascii: "/") ? String(base.dropLast()) + path : base + path
    }

    /// Whether `bytes` holds only characters a URL's path and query may carry as they are
    /// (RFC 3986 unreserved, sub-delims, `:@/?`), `%` only before two hex digits.
    static func isPlainPathAndQuery(_ bytes: String.UTF8View) -> Bool {
        var pendingHexDigits = 0
        for byte in bytes {
            if pendingHexDigits > 0 {
                guard byte.isHexDigit else { return false }
                pendingHexDigits -= 1
            } else if byte == UInt8(ascii: "%") {
                pendingHexDigits = 2
            } else if !byte.isPlainURLCharacter {
                return false
            }
        }
        return pendingHexDigits == 0
    }

    /// The body to send: bytes in memory for a replayable body of known, small length (or of any
    /// known length when `inMemory`: a middleware reads its parameters; a `.single` one is then
    /// read into memory too, and stays one-shot); a stream otherwise — replayable when the body
    /// is `.multiple`, one-shot when it is `.single`.
    func requestContent(_ body: HTTPBody?, request: RequestSummary, inMemory: Bool = false) async throws -> PreparedBody? {
        guard let body else { return nil }
        let length: Int64?
        switch body.length {
        case .known(let count): length = count
        case .unknown: length = nil
        }
        switch body.iterationBehavior {
        case .multiple:
            if let length, inMemory || length <= Int64(configuration.requestBodyBufferingLimit) {
                return .data(try await Self.collect(body, length: length, request: request))
            }
            return .stream(RequestBodyStream(length: length) { RequestChunks(body: body) })
        case .single:
            // Read once into memory when a middleware reads its parameters, and still sent at
            // most once: a one-shot body whose bytes the middleware can see.
            if let length, inMemory {
                return .stream(.once(bytes: try await Self.collect(body, length: length, request: request)))
            }
            return .stream(.once(length: length, RequestChunks(body: body)))
        }
    }

    /// A body of known `length` read into memory, failing as a streamed body fails (the same
    /// `.bodyStreamFailed` code and message): when its sequence throws, or when it produces more
    /// or fewer bytes than it announced. A cancellation stays a `CancellationError`.
    static func collect(_ body: HTTPBody, length: Int64, request: RequestSummary) async throws -> Data {
        func failure(_ message: String, underlying: (any Error)? = nil) -> CurlewError {
            var error = CurlewError(code: .bodyStreamFailed, message: message, request: request, underlying: underlying)
            error.stage = .transport
            return error
        }
        var data = Data()
        // The declared length is the body's word, not yet checked: memory is reserved for at most
        // 1 MiB of it up front, the rest as the bytes arrive.
        data.reserveCapacity(Int(min(length, 1 << 20)))
        do {
            for try await chunk in body {
                guard Int64(data.count + chunk.count) <= length else {
                    throw failure("the request body stream produced more than its declared \(length) bytes")
                }
                data.append(contentsOf: chunk)
            }
        } catch let error as CurlewError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            try Task.checkCancellation()
            throw failure("the request body stream failed: \(error)", underlying: error)
        }
        // A sequence that ends early because its task was cancelled (an `AsyncStream`'s does)
        // is a cancellation, not a short body.
        try Task.checkCancellation()
        guard Int64(data.count) == length else {
            throw failure("the request body stream ended after \(data.count) of its declared \(length) bytes")
        }
        return data
    }

    // MARK: Response

    /// The body length the head of a `status` answer announces: none for `1xx`, `204` and `304`,
    /// which have no body whatever their `Content-Length` says (a `304` repeats the `200`'s, RFC
    /// 9110 §8.6); else `Content-Length` unless the body was re-coded (Curlew decodes `gzip`,
    /// `deflate`, `br` and `zstd` itself, so the announced length is not what arrives).
    static func length(of headers: HTTPFields, status: HTTPResponse.Status) -> HTTPBody.Length {
        if status.code < 200 || status.code == 204 || status.code == 304 { return .known(0) }
        // One pass over the fields (a response head has a handful): cheaper than three lookups by
        // name, which build the fields' name index.
        var length: Int64?
        var lengthFields = 0
        for field in headers {
            if field.name == .contentEncoding { return .unknown }
            if field.name == .contentLength {
                lengthFields += 1
                length = Int64(field.value)
            }
        }
        guard lengthFields == 1, let length, length >= 0 else { return .unknown }
        return .known(length)
    }

    /// Whether the request's body is one whose parameters Curlew's middleware read or add to: a
    /// form (`application/x-www-form-urlencoded`) or JSON (`application/json`, `…+json`) body.
    static func hasParameterBody(_ fields: HTTPFields) -> Bool {
        guard let type = fields[.contentType]?.lowercased() else { return false }
        let mediaType = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? type
        return mediaType == "application/x-www-form-urlencoded" || mediaType == "application/json" || mediaType.hasSuffix("+json")
    }

    /// Whether a middleware that reads a form or JSON body's parameters, or adds to them, applies
    /// to the call: signing (its signature covers them) or common arguments. Either one sees
    /// only a body in memory.
    static func parameterMiddlewareApplies(client: APIClient, options: RequestOptions) -> Bool {
        func reads(_ middleware: any APIMiddleware) -> Bool {
            let kind = middleware.kind
            return (kind == .signing || kind == .commonArguments) && !options.skippedMiddleware.contains(kind)
        }
        return client.configuration.middleware.contains(where: reads) || options.middleware.contains(where: reads)
    }

    /// The statuses the client's (and the call's) middleware act on
    /// (``/Curlew/MiddlewareCapabilities/handledStatuses``): retry and token refresh, or a
    /// middleware of the user's own that declares them.
    static func statusesHandledByMiddleware(client: APIClient, options: RequestOptions) -> Set<Int> {
        var statuses: Set<Int> = []
        for middleware in client.configuration.middleware + options.middleware where !options.skippedMiddleware.contains(middleware.kind) {
            statuses.formUnion(middleware.capabilities.handledStatuses)
        }
        return statuses
    }
}

extension UInt8 {
    /// `0-9`, `a-f`, `A-F`.
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }

    /// An RFC 3986 unreserved or sub-delim character, or one of `:@/?`.
    fileprivate var isPlainURLCharacter: Bool {
        switch self {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="):
            true
        case UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"): true
        default: false
        }
    }
}
