/// Where and how a request's body parameters (`@Field` properties and ``Endpoint/parameters``)
/// are encoded.
public enum ParameterEncoding: Sendable, Hashable {
    /// Appended to the URL's query string, on any method.
    case query
    /// An `application/x-www-form-urlencoded` body.
    case form
    /// An `application/json` body (an object with the parameters as members).
    case json

    /// `.query` for `GET`, `HEAD` and `DELETE`, `.form` otherwise.
    public static func methodDependent(_ method: String) -> ParameterEncoding {
        switch method {
        case "GET", "HEAD", "DELETE": .query
        default: .form
        }
    }
}
