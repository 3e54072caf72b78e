public import Foundation
public import HTTPTypes

/// The one error type Curlew throws.
///
/// Switch on ``level`` to decide what to show or do — the three levels of the seed frameworks
/// (network, server, data format) plus auth, cancellation and invalid input — and on ``code``
/// for the precise reason:
///
/// ```swift
/// do {
///     let pictures = try await client.send(SearchRequest(key: "sunset"))
/// } catch let error as CurlewError {
///     switch error.level {
///     case .transport: retryLater()
///     case .httpStatus: print("HTTP", error.status?.code ?? 0)
///     case .dataFormat: report(error.dataPath ?? "")
///     default: throw error
///     }
/// }
/// ```
///
/// The ``description`` names the request (method and URL with secret-looking query values
/// redacted) and never contains header values.
public struct CurlewError: Error, Sendable {
    /// The precise reason for the failure.
    public var code: Code
    /// A human-readable explanation, without secrets.
    public var message: String
    /// The request that failed, redacted for display. `nil` only when the failure happened before
    /// the request could be described (for example a malformed base URL).
    public var request: RequestSummary?
    /// The HTTP status, when a response was received.
    public var status: HTTPResponse.Status?
    /// The response headers, when a response was received. Not part of ``description``.
    public var headers: HTTPFields?
    /// The first bytes of the response body as text (at most ``bodySnippetLimit`` characters).
    public var bodySnippet: String?
    /// The whole response body, for HTTP status and server (business code) errors, so a caller
    /// can read an error payload. Never part of ``description``.
    public var responseBody: Data?
    /// For data-format errors: where in the body the problem is, e.g. `data[3].id`.
    public var dataPath: String?
    /// For server errors: the business code the envelope carried.
    public var businessCode: String?
    /// The error this one wraps (a `DecodingError`, a `CancellationError`, …), if any.
    public var underlying: (any Error)?
    /// Where on the request path the error was born; `nil` for errors made outside a call.
    public var stage: Stage?
    /// The values of the steps that completed before a `Chain` step failed, in order.
    public var completedSteps: [any Sendable] = []
    /// What libcurl measured before the exchange failed (timings, bytes, reuse, HTTP version),
    /// for transport failures and for responses refused by status; `nil` when nothing was sent.
    public var metrics: TransferMetrics?
    /// For a transport failure: the phase that failed (DNS, connect, TLS, send, receive).
    public var transportPhase: TransportPhase?
    /// The attempt of the call (the number of its `attempt` event) whose exchange failed, set by
    /// the client's innermost step, so a middleware outside another one that resends (token
    /// refresh around retry) numbers its resend after the attempts made inside.
    package var attempt: Int?

    /// How many characters of a response body ``bodySnippet`` keeps.
    public static let bodySnippetLimit = 512

    /// The level of the failure, derived from ``code``.
    public var level: Level { code.level }

    /// Creates an error. Most callers only inspect errors; middleware may create server errors.
    public init(
        code: Code,
        message: String,
        request: RequestSummary? = nil,
        status: HTTPResponse.Status? = nil,
        headers: HTTPFields? = nil,
        bodySnippet: String? = nil,
        dataPath: String? = nil,
        businessCode: String? = nil,
        underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.request = request
        self.status = status
        self.headers = headers
        self.bodySnippet = bodySnippet
        self.dataPath = dataPath
        self.businessCode = businessCode
        self.underlying = underlying
    }

    /// Makes a snippet of a response body for an error: valid UTF-8 text cut at
    /// ``bodySnippetLimit`` characters, or a byte count for binary bodies.
    public static func snippet(of body: Data) -> String? {
        if body.isEmpty { return nil }
        guard
            let text = String(validating: body.prefix(Self.bodySnippetLimit * 4), as: UTF8.self)
                ?? String(validating: body.prefix(Self.bodySnippetLimit), as: UTF8.self)
        else {
            return "<\(body.count) bytes of binary data>"
        }
        if text.count <= Self.bodySnippetLimit { return text }
        return String(text.prefix(Self.bodySnippetLimit)) + "…"
    }
}

extension CurlewError {
    /// The broad class of a failure, matching how a caller usually reacts to it.
    public enum Level: String, Sendable, Hashable, CaseIterable {
        /// The exchange did not complete: connect, DNS, TLS, timeouts, reset, body limits, shutdown.
        case transport
        /// A response arrived with a status the request does not accept.
        case httpStatus
        /// The server answered with a business error code inside its envelope.
        case server
        /// The body could not be turned into the expected value.
        case dataFormat
        /// Authentication is missing, expired or was refused.
        case auth
        /// The caller's task was cancelled.
        case cancelled
        /// The caller's side: the request itself is malformed (nothing was sent), or the caller's
        /// own code around it — a middleware, a chain step, a batch operation — threw an error of
        /// its own. Retrying the same call does not help.
        case invalidRequest
    }
}

extension CurlewError: CustomStringConvertible, CustomDebugStringConvertible {
    /// `"<code>: <message> (<METHOD> <redacted URL>) [HTTP <status>] body: <snippet>"`.
    /// Header values are never included.
    public var description: String {
        var text = "\(code): \(message)"
        if let request { text += " (\(request))" }
        if let stage { text += " at \(stage)" }
        if let transportPhase { text += " [phase \(transportPhase)]" }
        if let status { text += " [HTTP \(status.code)]" }
        if let businessCode { text += " [code \(businessCode)]" }
        if let bodySnippet { text += " body: \(ErrorBodyExcerpt.excerpt(of: bodySnippet))" }
        return text
    }

    /// Same as ``description``; header values stay out of debug output too.
    public var debugDescription: String { "CurlewError(\(description))" }
}

extension CurlewError: LocalizedError {
    /// The ``description``, so `error.localizedDescription` — what logging code and most UIs
    /// print — names the code, the request and the reason instead of Foundation's generic
    /// "The operation could not be completed".
    public var errorDescription: String? { description }
}

extension CurlewError {
    /// A server error for a business code found in a response envelope (a failure the HTTP status
    /// does not show), for `Endpoint.didReceive(_:)`, `Endpoint.decode(_:decoder:)` or middleware.
    /// The client fills in the request, status and body snippet.
    public static func serverError(businessCode: String, message: String) -> CurlewError {
        CurlewError(code: .serverError, message: message, businessCode: businessCode)
    }
}
