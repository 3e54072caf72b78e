public import HTTPTypes
internal import Foundation

/// Sends the current credential in a header (`Authorization: Bearer <token>` by default) or as a
/// parameter (see ``tokenParameter``), and fails requests that require login before anything is
/// sent when there is no credential.
///
/// ```swift
/// AuthorizationMiddleware(store: store)                                    // Authorization: Bearer …
/// AuthorizationMiddleware(store: store, tokenParameter: "accessToken",      // ?accessToken=… or a
///                         placement: .alongsideParameters,                 // form/JSON body member,
///                         attachesOnlyWhenLoginRequired: true)             // login-required requests only
/// AuthorizationMiddleware.basic(username: "ines", password: "secret")      // Authorization: Basic …
/// ```
public struct AuthorizationMiddleware: APIMiddleware {
    /// Where the credential comes from.
    public let store: TokenStore
    /// The header to set. Default: `Authorization`.
    public var headerName: HTTPField.Name
    /// Written before the token, e.g. `"Bearer "`; empty for a bare token.
    public var scheme: String
    /// When set, the token travels as this parameter instead of the header (``placement`` says
    /// where), replacing a parameter of the same name.
    public var tokenParameter: String?
    /// Where ``tokenParameter`` goes. Default: ``ParameterPlacement/query``.
    public var placement: ParameterPlacement
    /// Whether only requests that declare they need login (``RequestOptions/requiresAuthentication``)
    /// receive the credential; others go without it. Default: `false`,
    /// every request to a trusted origin receives it.
    public var attachesOnlyWhenLoginRequired: Bool
    /// Why ``basic(username:password:)`` cannot send its credential (a `:` in the username, a
    /// control character); every call that would carry it fails with it, unsent.
    private var refusal: String?

    /// Creates the middleware that sends the token in a header.
    public init(
        store: TokenStore, headerName: HTTPField.Name = .authorization, scheme: String = "Bearer ",
        attachesOnlyWhenLoginRequired: Bool = false
    ) {
        self.store = store
        self.headerName = headerName
        self.scheme = scheme
        self.tokenParameter = nil
        self.placement = .query
        self.attachesOnlyWhenLoginRequired = attachesOnlyWhenLoginRequired
    }

    /// Creates the middleware that sends the token as a parameter: in the query, or beside the
    /// request's own parameters in a form or JSON body.
    public init(store: TokenStore, tokenParameter: String, placement: ParameterPlacement = .query, attachesOnlyWhenLoginRequired: Bool = false) {
        self.init(store: store, attachesOnlyWhenLoginRequired: attachesOnlyWhenLoginRequired)
        self.tokenParameter = tokenParameter
        self.placement = placement
    }

    /// `Authorization: Basic base64(username:password)` on every request to a trusted origin.
    ///
    /// RFC 7617 forbids a `:` in the username (the server takes everything after the first `:`
    /// as the password) and control characters in either part: with one of them, every call
    /// that would carry the credential fails with ``/CurlewCore/CurlewError/Code/invalidHeader``
    /// before anything is sent; the message does not repeat the credential.
    public static func basic(username: String, password: String) -> AuthorizationMiddleware {
        // RFC 7617 forbids every control character in both parts, the tab a header value allows included.
        func hasControlCharacter(_ text: String) -> Bool { text.utf8.contains { $0 < 0x20 || $0 == 0x7F } }
        let encoded = Data("\(username):\(password)".utf8).base64EncodedString()
        var middleware = AuthorizationMiddleware(store: TokenStore(credential: .init(accessToken: encoded)), scheme: "Basic ")
        if username.contains(":") {
            middleware.refusal =
                "the Basic username contains ':', which RFC 7617 forbids: the server would take what follows it as the password"
        } else if hasControlCharacter(username) || hasControlCharacter(password) {
            middleware.refusal =
                "the Basic \(hasControlCharacter(username) ? "username" : "password") contains CR, LF, NUL, a tab or another control character, which RFC 7617 forbids"
        }
        return middleware
    }

    /// `.authorization`.
    public var kind: MiddlewareKind { .authorization }

    /// ``MiddlewarePhase/authorization``.
    public var phase: MiddlewarePhase? { .authorization }
    /// The client's credential source.
    public var capabilities: MiddlewareCapabilities { MiddlewareCapabilities(providesCredentials: true) }

    /// Adds the header, or throws `.notLoggedIn` for a request that requires login when there is
    /// no credential or the request's origin is not trusted with it, and `.invalidHeader` when the
    /// credential contains a control character (CR, LF, NUL…), which a header cannot carry, or is
    /// a Basic credential RFC 7617 forbids.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard context.trusts(request.url) else {
            // Another origin (a CDN, a partner API) never receives the credential, and a call
            // that requires login never goes out without one.
            if context.requiresAuthentication {
                throw CurlewError(
                    code: .notLoggedIn,
                    message: "this request requires login, and its origin is not trusted with the credential (list it in trustedOrigins)",
                    request: request.summary)
            }
            return try await next(request, context)
        }
        if attachesOnlyWhenLoginRequired, !context.requiresAuthentication {
            return try await next(request, context)
        }
        // The refresh middleware's choice, when it is this store's (or set by code of your own).
        let chosenHere = context.credentialStore.map { $0 == ObjectIdentifier(store) } ?? true
        var credential = chosenHere ? context.credential?.token : nil
        if credential == nil { credential = store.snapshot?.0 }
        guard let credential else {
            if context.requiresAuthentication {
                throw CurlewError(code: .notLoggedIn, message: "this request requires login and there is no credential", request: request.summary)
            }
            return try await next(request, context)
        }
        var request = request
        if let tokenParameter {
            try ParameterPlacer.place([tokenParameter: credential.accessToken], in: &request, at: placement, existing: .replace)
        } else {
            // `HTTPField` would quietly turn a CR, LF or NUL into a space and send a credential
            // the server never issued (then refresh it over and over); refuse it, as the
            // endpoint's own headers are refused, without repeating the secret.
            if let refusal { throw CurlewError(code: .invalidHeader, message: refusal, request: request.summary) }
            guard HeaderValidation.isSafeValue(credential.accessToken), HeaderValidation.isSafeValue(scheme) else {
                throw CurlewError(
                    code: .invalidHeader,
                    message: "the credential cannot be sent in header \(headerName.rawName): it contains CR, LF, NUL or another control character",
                    request: request.summary)
            }
            request.headers[headerName] = scheme + credential.accessToken
        }
        return try await next(request, context)
    }
}
