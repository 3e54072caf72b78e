public import HTTPTypes

/// Sends the current credential in a header (`Authorization: Bearer <token>` by default), and
/// fails requests that require login before anything is sent when there is no credential
/// (LSBaseRequest's `isLogin`).
public struct AuthorizationMiddleware: APIMiddleware {
    /// Where the credential comes from.
    public let store: TokenStore
    /// The header to set. Default: `Authorization`.
    public var headerName: HTTPField.Name
    /// Written before the token, e.g. `"Bearer "`; empty for a bare token.
    public var scheme: String

    /// Creates the middleware.
    public init(store: TokenStore, headerName: HTTPField.Name = .authorization, scheme: String = "Bearer ") {
        self.store = store
        self.headerName = headerName
        self.scheme = scheme
    }

    /// `.authorization`.
    public var kind: MiddlewareKind { .authorization }

    /// ``MiddlewarePhase/authorization``.
    public var phase: MiddlewarePhase? { .authorization }

    /// Adds the header, or throws `.notLoggedIn` for a request that requires login.
    public func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard context.trusts(request.url) else {
            // Another origin (a CDN, a partner API) never receives the credential.
            return try await next(request, context)
        }
        var credential = context.credential?.token
        if credential == nil { credential = await store.current()?.0 }
        guard let credential else {
            if context.requiresAuthentication {
                throw CurlewError(code: .notLoggedIn, message: "this request requires login and there is no credential", request: request.summary)
            }
            return try await next(request, context)
        }
        var request = request
        request.headers[headerName] = scheme + credential.accessToken
        return try await next(request, context)
    }
}
