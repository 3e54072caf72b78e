internal import Foundation
internal import HTTPTypes

/// Adds parameters and headers to every request — version, platform, device, session key —
/// unless the request already has one of the same name (so each is overridable per request), or
/// replacing it with ``ExistingParameterPolicy/replace``.
///
/// Parameters go where ``placement`` says: the query by default (works for every method), or
/// ``ParameterPlacement/alongsideParameters`` — beside the request's own parameters in a form or
/// JSON body, the query otherwise (LCNetwork merges its unified arguments into
/// `requestArgument`).
///
/// ```swift
/// CommonArgumentsMiddleware(parameters: ["v": "2.1", "platform": "linux"], placement: .alongsideParameters)
/// ```
public struct CommonArgumentsMiddleware: APIMiddleware {
    /// Produces the current arguments; called for every request so values may change (a session
    /// key after login).
    public typealias Provider = @Sendable () async -> (parameters: [String: String], headers: [String: String])

    private let provider: Provider
    /// Where the parameters go. Default: ``ParameterPlacement/query``.
    public var placement: ParameterPlacement
    /// Whether a parameter or header the request already has is kept or replaced.
    /// Default: ``ExistingParameterPolicy/keep``.
    public var existing: ExistingParameterPolicy

    /// Adds arguments that a closure produces per request.
    public init(placement: ParameterPlacement = .query, existing: ExistingParameterPolicy = .keep, _ provider: @escaping Provider) {
        self.provider = provider
        self.placement = placement
        self.existing = existing
    }

    /// Adds fixed arguments.
    public init(
        parameters: [String: String] = [:], headers: [String: String] = [:],
        placement: ParameterPlacement = .query, existing: ExistingParameterPolicy = .keep
    ) {
        self.init(placement: placement, existing: existing) { (parameters, headers) }
    }

    /// `.commonArguments`.
    public var kind: MiddlewareKind { .commonArguments }

    /// ``MiddlewarePhase/commonArguments``.
    public var phase: MiddlewarePhase? { .commonArguments }

    /// Adds what the request does not already have (or replaces it, per ``existing``).
    public func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard context.trusts(request.url) else { return try await next(request, context) }
        let (parameters, headers) = await provider()
        var request = request
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            guard let fieldName = HTTPField.Name(name), HeaderValidation.isSafeValue(value) else {
                throw CurlewError(code: .invalidHeader, message: "common header \(HeaderValidation.quoted(name)) is invalid", request: request.summary)
            }
            if existing == .replace || request.headers[fieldName] == nil { request.headers[fieldName] = value }
        }
        try ParameterPlacer.place(parameters, in: &request, at: placement, existing: existing)
        return try await next(request, context)
    }
}
