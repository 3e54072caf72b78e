/// Which base URL a call uses (LCNetwork's `viceBaseUrl`, Monkey's `useCDN`), chosen per endpoint
/// type or per call in ``RequestOptions/baseURLChoice`` on a client with a
/// ``BaseURLChoiceMiddleware``.
public enum BaseURLChoice: Sendable, Hashable {
    /// The client's base URL (and its failover mirrors). The default.
    case main
    /// The secondary API host.
    case secondary
    /// The CDN host.
    case cdn
}

enum BaseURLChoiceKey: RequestOptionKey {
    static let defaultValue = BaseURLChoice.main
}

extension RequestOptions {
    /// Which base URL the call uses (see ``BaseURLChoiceMiddleware``). Default: ``BaseURLChoice/main``.
    public var baseURLChoice: BaseURLChoice {
        get { self[BaseURLChoiceKey.self] }
        set { self[BaseURLChoiceKey.self] = newValue }
    }
}

extension MiddlewarePhase {
    /// ``BaseURLChoiceMiddleware``: just outside failover, so a call on the main base URL still
    /// fails over to its mirrors while a secondary or CDN call is left alone.
    public static let baseURLChoice = MiddlewarePhase(rank: 340, name: "baseURLChoice")
}

/// Sends a call to the secondary or CDN host when its ``RequestOptions/baseURLChoice`` says so:
/// a URL under `main` is moved, path and query kept, under the chosen base. Calls on
/// ``BaseURLChoice/main`` and absolute URLs elsewhere pass unchanged; a ``FailoverMiddleware``
/// keeps working for the main base URL.
///
/// ```swift
/// let choice = BaseURLChoiceMiddleware(main: "https://api.example.com/v1",
///                                      secondary: "https://api2.example.com/v1",
///                                      cdn: "https://cdn.example.com/v1")
/// struct Banner: Endpoint {
///     typealias Response = Data
///     var path: String { "banner.png" }
///     var options: RequestOptions { var o = RequestOptions(); o.baseURLChoice = .cdn; return o }
/// }
/// ```
///
/// The secondary and CDN base URLs are the user's own origins: the middleware declares them as
/// trusted origins (``MiddlewareCapabilities/trustedOrigins``), so calls there keep the token,
/// signature and common arguments. Name a host in `untrusted` (a third-party CDN) and it gets
/// none of them; a login-required call that would go there then fails with `.notLoggedIn`
/// before anything is sent.
public struct BaseURLChoiceMiddleware: APIMiddleware {
    /// The client's base URL.
    public let main: String
    /// The secondary base URL, if any.
    public let secondary: String?
    /// The CDN base URL, if any.
    public let cdn: String?
    /// The choices whose base URL is not trusted with credentials, signatures and common
    /// arguments. Default: none.
    public let untrusted: Set<BaseURLChoice>

    /// Creates the middleware.
    /// - Parameters:
    ///   - main: The client's base URL.
    ///   - secondary: The secondary base URL (LCNetwork's `viceBaseUrl`).
    ///   - cdn: The CDN base URL (Monkey's `cdnURL`).
    ///   - untrusted: Choices whose base URL must not receive credentials, signatures and common
    ///     arguments (e.g. `[.cdn]` for a third-party CDN). Default: none — both are trusted.
    public init(main: String, secondary: String? = nil, cdn: String? = nil, untrusted: Set<BaseURLChoice> = []) {
        self.main = main
        self.secondary = secondary
        self.cdn = cdn
        self.untrusted = untrusted
    }

    /// The configured secondary and CDN base URLs, except `untrusted` ones, are trusted origins.
    public var capabilities: MiddlewareCapabilities {
        var origins: [String] = []
        if let secondary, !untrusted.contains(.secondary) { origins.append(secondary) }
        if let cdn, !untrusted.contains(.cdn) { origins.append(cdn) }
        return MiddlewareCapabilities(trustedOrigins: origins)
    }

    /// `BaseURLChoice`.
    public var kind: MiddlewareKind { MiddlewareKind("BaseURLChoice") }

    /// ``MiddlewarePhase/baseURLChoice``.
    public var phase: MiddlewarePhase? { .baseURLChoice }

    /// Moves the URL under the chosen base.
    /// - Throws: `.malformedURL` (before anything is sent) when the chosen base is not configured.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        let choice = context.options.baseURLChoice
        guard choice != .main, Self.isUnder(main, request.url) else { return try await next(request, context) }
        guard let base = choice == .cdn ? cdn : secondary else {
            throw CurlewError(code: .malformedURL, message: "the call chose the \(choice) base URL, but none is configured", request: request.summary)
        }
        var request = request
        let url = base + request.url.dropFirst(main.count)
        try RequestURLBuilder.validateAbsolute(url, method: request.method)
        request.replaceURL(url)
        return try await next(request, context)
    }

    /// Whether `url` is `base` or below it (`https://a.example:1` is not a base of `https://a.example:10`).
    static func isUnder(_ base: String, _ url: String) -> Bool {
        guard url.hasPrefix(base) else { return false }
        if base.hasSuffix("/") { return true }
        guard let next = url.dropFirst(base.count).first else { return true }
        return next == "/" || next == "?" || next == "#"
    }
}
