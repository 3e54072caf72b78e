internal import Foundation
internal import HTTPTypes

/// Adds parameters and headers to every request — version, platform, device, session key —
/// unless the request already has one of the same name (so each is overridable per request), or
/// replacing it with ``replacesExisting``.
///
/// Parameters go where ``placement`` says: the query by default (works for every method), or
/// ``ParameterPlacement/alongsideParameters`` — beside the request's own parameters in a form or
/// JSON body, the query otherwise.
///
/// ```swift
/// CommonArgumentsMiddleware(parameters: ["v": "2.1", "platform": "linux"], placement: .alongsideParameters)
/// ```
public struct CommonArgumentsMiddleware: APIMiddleware {
    /// Produces the current arguments; called for every request so values may change (a session
    /// key after login).
    typealias Provider = @Sendable () async -> (parameters: [String: String], headers: [String: String])

    /// Where the arguments come from: fixed ones are sorted (and their header names checked)
    /// once, at creation; a provider's on every request.
    private enum Source: Sendable {
        case fixed(parameters: [(key: String, value: String)], headers: [(name: String, field: HTTPField.Name?, value: String)])
        case provider(Provider)
    }

    private let source: Source
    /// Where the parameters go. Default: ``ParameterPlacement/query``.
    public var placement: ParameterPlacement
    /// Whether a parameter or header the request already has is replaced (a session key, a
    /// rewritten version) instead of kept. Default: `false`, every added parameter stays
    /// overridable per request.
    public var replacesExisting: Bool
    private var existing: ExistingParameterPolicy { replacesExisting ? .replace : .keep }

    /// Adds arguments that a closure produces per request.
    public init(placement: ParameterPlacement = .query, replacesExisting: Bool = false, _ provider: @escaping @Sendable () async -> (parameters: [String: String], headers: [String: String])) {
        self.source = .provider(provider)
        self.placement = placement
        self.replacesExisting = replacesExisting
    }

    /// Adds fixed arguments.
    public init(
        parameters: [String: String] = [:], headers: [String: String] = [:],
        placement: ParameterPlacement = .query, replacesExisting: Bool = false
    ) {
        self.source = .fixed(
            parameters: parameters.sorted { $0.key < $1.key },
            headers: Self.named(headers))
        self.placement = placement
        self.replacesExisting = replacesExisting
    }

    /// Headers sorted by name, each with its field name (`nil` when the name is invalid).
    private static func named(_ headers: [String: String]) -> [(name: String, field: HTTPField.Name?, value: String)] {
        headers.sorted { $0.key < $1.key }.map { (name: $0.key, field: HTTPField.Name($0.key), value: $0.value) }
    }

    /// `.commonArguments`.
    public var kind: MiddlewareKind { .commonArguments }

    /// ``MiddlewarePhase/commonArguments``.
    public var phase: MiddlewarePhase? { .commonArguments }

    /// Adds what the request does not already have (or replaces it, per ``replacesExisting``).
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard context.trusts(request.url) else { return try await next(request, context) }
        let parameters: [(key: String, value: String)]
        let headers: [(name: String, field: HTTPField.Name?, value: String)]
        switch source {
        case .fixed(let fixedParameters, let fixedHeaders):
            (parameters, headers) = (fixedParameters, fixedHeaders)
        case .provider(let provider):
            let provided = await provider()
            parameters = provided.parameters.sorted { $0.key < $1.key }
            headers = Self.named(provided.headers)
        }
        var request = request
        for (name, fieldName, value) in headers {
            guard let fieldName, HeaderValidation.isSafeValue(value) else {
                throw CurlewError(code: .invalidHeader, message: "common header \(HeaderValidation.quoted(name)) is invalid", request: request.summary)
            }
            if request.headers[fieldName] == nil {
                request.headers.append(HTTPField(name: fieldName, value: value))
            } else if replacesExisting {
                request.headers[fieldName] = value
            }
        }
        try ParameterPlacer.place(sorted: parameters, in: &request, at: placement, existing: existing)
        return try await next(request, context)
    }
}
