internal import Foundation
internal import HTTPTypes

/// Adds parameters and headers to every request — version, platform, device, session key —
/// unless the request already has one of the same name (so each is overridable per request).
/// Parameters go into the query, which works for every method (LCNetwork's unified arguments).
public struct CommonArgumentsMiddleware: APIMiddleware {
    /// Produces the current arguments; called for every request so values may change (a session
    /// key after login).
    public typealias Provider = @Sendable () async -> (parameters: [String: String], headers: [String: String])

    private let provider: Provider

    /// Adds arguments that a closure produces per request.
    public init(_ provider: @escaping Provider) {
        self.provider = provider
    }

    /// Adds fixed arguments.
    public init(parameters: [String: String] = [:], headers: [String: String] = [:]) {
        self.provider = { (parameters, headers) }
    }

    /// `.commonArguments`.
    public var kind: MiddlewareKind { .commonArguments }

    /// ``MiddlewarePhase/commonArguments``.
    public var phase: MiddlewarePhase? { .commonArguments }

    /// Adds what the request does not already have.
    public func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard context.trusts(request.url) else { return try await next(request, context) }
        let (parameters, headers) = await provider()
        var request = request
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            guard let fieldName = HTTPField.Name(name), HeaderValidation.isSafeValue(value) else {
                throw CurlewError(code: .invalidHeader, message: "common header \(HeaderValidation.quoted(name)) is invalid", request: request.summary)
            }
            if request.headers[fieldName] == nil { request.headers[fieldName] = value }
        }
        let present = QueryString.names(of: request.url)
        let missing = parameters.filter { !present.contains($0.key) }.sorted { $0.key < $1.key }
        if !missing.isEmpty {
            request.setURL(QueryString.appending(missing.map { (name: $0.key, value: Optional($0.value)) }, to: request.url))
        }
        return try await next(request, context)
    }
}
