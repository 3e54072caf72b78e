internal import Curlew
internal import Foundation
internal import HTTPTypes
internal import OpenAPIRuntime
internal import Synchronization

/// One generated operation as a Curlew `Endpoint`: the URL, headers and body are
/// already final, so `willSend` puts them on the prepared request exactly (header order and
/// repeated names kept); every status is accepted (the generated client decides), and the
/// response is the raw body.
struct OperationEndpoint: Endpoint {
    typealias Response = Data

    let method: HTTPRequest.Method
    /// The absolute, percent-encoded URL.
    let url: String
    /// The generated request's header fields, in order.
    let fields: HTTPFields
    let content: PreparedBody?
    let options: RequestOptions

    /// The URL as the path: an absolute http(s) path is used as it is (the base URL does not apply).
    var path: String { url }

    /// Framing is the transport's: it announces the body's length itself or sends it chunked.
    static let framingFields: [HTTPField.Name] = [.contentLength, .transferEncoding]

    func accepts(_ status: HTTPResponse.Status) -> Bool { true }

    func willSend(_ request: inout PreparedRequest) throws {
        if request.url != url { try request.setURL(url) }
        // A name the generated request sets replaces the client's default of that name; then
        // every field goes in, in order, repeats included.
        var replaced: Set<HTTPField.Name> = []
        for field in fields where replaced.insert(field.name).inserted {
            request.headers[field.name] = nil
        }
        for field in fields where !Self.framingFields.contains(field.name) {
            request.headers.append(field)
        }
        request.content = content
    }

    func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> Data {
        response.body
    }
}

/// Shows a status that retry or token refresh act on to them as the error they expect
/// (`.unacceptableStatus`), carrying the whole response so the transport can still hand it to the
/// generated client when no attempt is left.
///
/// Its phase puts it innermost, after signing, among the middleware that depend on the URL: so
/// the redirect step still runs between the outer middleware and authorization or signing (which
/// then run again for every hop), and the gate sees each hop's answer — a redirect passes.
struct StatusGate: APIMiddleware {
    let statuses: Set<Int>

    /// After ``/Curlew/MiddlewarePhase/signing``.
    static let phase = MiddlewarePhase(rank: 1_000, name: "openAPIStatusGate")

    var phase: MiddlewarePhase? { Self.phase }

    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        let raw = try await next(request, context)
        guard statuses.contains(raw.status.code) else { return raw }
        var error = CurlewError(
            code: .unacceptableStatus, message: "HTTP \(raw.status.code), shown to the retry and refresh middleware", request: request.summary,
            underlying: ForwardedResponse(response: raw))
        error.status = raw.status
        error.headers = raw.headers
        error.responseBody = raw.body
        error.stage = .status
        throw error
    }
}

/// The response a `StatusGate` turned into an error; the transport returns it to the
/// generated client when that error is the call's outcome.
struct ForwardedResponse: ResponseCarryingError, Sendable {
    let response: RawResponse

    /// The forwarded response behind `error`: an `.unacceptableStatus` from the gate, or what
    /// token refresh wraps it in — `.unauthorized` when its attempts are spent, `.sessionEnded`
    /// for a status that ends the session (the session ended; the response is still the
    /// operation's answer).
    static func find(in error: CurlewError) -> ForwardedResponse? {
        var current: CurlewError? = error
        while let error = current {
            guard error.code == .unacceptableStatus || error.code == .unauthorized || error.code == .sessionEnded else { return nil }
            if let forwarded = error.underlying as? ForwardedResponse { return forwarded }
            current = error.underlying as? CurlewError
        }
        return nil
    }

    /// The response as the generated client receives it; a streamed body is read up to `limit`,
    /// and one announced longer fails the call, as it does when it is not forwarded.
    func converted(isHead: Bool, limit: ResponseBodyLimit?) throws(CurlewError) -> (HTTPResponse, HTTPBody?) {
        let head = HTTPResponse(status: response.status, headerFields: response.headers)
        guard !isHead else { return (head, nil) }
        switch response.content {
        case .stream(let stream):
            let length = CurlewTransport.length(of: response.headers, status: response.status)
            if let limit, limit.refuses(length) {
                stream.cancel()
                throw limit.exceeded
            }
            return (head, HTTPBody(ResponseChunks(stream: stream, limit: limit), length: length, iterationBehavior: .single))
        case .data(let data):
            return (head, HTTPBody(data))
        case .file:
            return (head, HTTPBody())
        }
    }
}

/// An `HTTPBody` read as `Data` chunks for a `RequestBodyStream`: one pass over the body
/// per iterator (a `.single` body refuses a second).
struct RequestChunks: AsyncSequence, Sendable {
    typealias Element = Data
    typealias Failure = any Error

    let body: HTTPBody

    func makeAsyncIterator() -> Iterator { Iterator(base: body.makeAsyncIterator()) }

    struct Iterator: AsyncIteratorProtocol {
        typealias Element = Data
        typealias Failure = any Error
        var base: HTTPBody.Iterator

        mutating func next() async throws -> Data? {
            guard let chunk = try await base.next() else { return nil }
            return Data(chunk)
        }
    }
}

/// The most bytes an operation's response body may have (its `RequestOptions.maximumBodySize`),
/// and the error past it: the one a collected body fails with.
struct ResponseBodyLimit: Sendable {
    let bytes: Int
    let request: RequestSummary

    /// Whether a body of the announced `length` is longer than the limit.
    func refuses(_ length: HTTPBody.Length) -> Bool {
        guard case .known(let announced) = length else { return false }
        return announced > Int64(bytes)
    }

    var exceeded: CurlewError {
        var error = CurlewError(code: .bodyTooLarge, message: "response body exceeds the maximum of \(bytes) bytes", request: request)
        error.stage = .transport
        return error
    }
}

/// A streamed Curlew response body as `HTTPBody` chunks. Dropping an iterator before the end
/// stops the transfer (the body's own copy of the stream may live on inside the `HTTPBody`), and
/// so does a body longer than `limit`, whose reading then fails with `.bodyTooLarge`.
struct ResponseChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    typealias Failure = any Error

    let stream: ResponseBodyStream
    let limit: ResponseBodyLimit?

    func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), reading: Reading(stream: stream), limit: limit)
    }

    struct Iterator: AsyncIteratorProtocol {
        typealias Element = ArraySlice<UInt8>
        typealias Failure = any Error
        var base: ResponseBodyStream.Iterator
        let reading: Reading
        let limit: ResponseBodyLimit?
        /// Bytes handed out so far.
        var received = 0

        mutating func next() async throws -> ArraySlice<UInt8>? {
            do {
                guard let chunk = try await base.next() else {
                    reading.ended()
                    return nil
                }
                received += chunk.count
                if let limit, received > limit.bytes {
                    reading.stream.cancel()
                    throw limit.exceeded
                }
                return ArraySlice(chunk)
            } catch {
                reading.ended()
                throw error
            }
        }
    }

    /// One iteration: when it goes away before the body ended, the transfer stops.
    final class Reading: Sendable {
        let stream: ResponseBodyStream
        /// Whether the body ended (or failed) for this reader.
        private let hasEnded = Atomic(false)

        init(stream: ResponseBodyStream) { self.stream = stream }

        func ended() { hasEnded.store(true, ordering: .relaxed) }

        deinit {
            if !hasEnded.load(ordering: .relaxed) { stream.cancel() }
        }
    }
}
