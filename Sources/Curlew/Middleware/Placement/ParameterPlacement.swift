/// Where a middleware puts the parameters it adds — an access token, common arguments — shared
/// by ``AuthorizationMiddleware`` and ``CommonArgumentsMiddleware``.
///
/// | placement | GET, form POST, JSON POST, other body |
/// | --- | --- |
/// | `.query` | query, query, query, query |
/// | `.alongsideParameters` | query, form field, JSON member, query |
/// | `.body` | a new form body, form field, JSON member, fails with `.encodingFailed` |
///
/// A JSON body must be an object to receive members (otherwise `.encodingFailed`); it is written
/// again compactly with sorted keys. Other query parameters and form fields keep their bytes.
public enum ParameterPlacement: Sendable, Hashable {
    /// The URL query, on every method.
    case query
    /// Where the request's own parameters are: a URL-encoded form or JSON object body when the
    /// request has one, the query otherwise.
    case alongsideParameters
    /// The body: a form or JSON object body gets the parameters as fields or members; a request
    /// without a body gets a new `application/x-www-form-urlencoded` body.
    case body
}

/// What to do when the request already has a parameter of the same name (public API:
/// ``CommonArgumentsMiddleware/replacesExisting``).
enum ExistingParameterPolicy: Sendable, Hashable {
    /// Keep the request's own value (so every added parameter stays overridable per request).
    case keep
    /// Replace it (a session key, a rewritten version, an access token that must be current).
    case replace
}
