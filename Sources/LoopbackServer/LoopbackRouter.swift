/// A tiny router for ``LoopbackServer``: exact path segments and `{name}` placeholders, by method.
///
/// ```swift
/// var router = LoopbackRouter()
/// router.on("GET", "/users/{id}") { request, parameters in .json(#"{"id":"\#(parameters["id"] ?? "")"}"#) }
/// let server = try await LoopbackServer.start(router: router)
/// ```
///
/// Paths are matched against ``ServerRequest/path`` segment by segment (a trailing `/` matters);
/// placeholder values are percent-decoded. The first matching route wins. A `HEAD` request
/// without a `HEAD` route uses the `GET` route. Anything else gets `404` with the JSON body
/// `{"error":"not found"}`.
public struct LoopbackRouter: Sendable {
    /// A route handler: the request and the values of the `{name}` placeholders.
    public typealias Handler = @Sendable (ServerRequest, _ parameters: [String: String]) async -> ServerResponse

    private enum Segment: Sendable {
        case literal(String)
        case parameter(String)
    }

    private struct Route: Sendable {
        var method: String
        var segments: [Segment]
        var handler: Handler
    }

    private var routes: [Route] = []

    /// Creates a router without routes.
    public init() {}

    /// Adds a route for `method` (case-insensitive) and `pattern`, e.g. `"/items/{id}"`.
    public mutating func on(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        let segments = Self.segments(of: pattern).map { segment -> Segment in
            if segment.hasPrefix("{"), segment.hasSuffix("}"), segment.count >= 2 {
                return .parameter(String(segment.dropFirst().dropLast()))
            }
            return .literal(segment)
        }
        routes.append(Route(method: method.uppercased(), segments: segments, handler: handler))
    }

    /// Answers `request` with the first matching route, or `404 {"error":"not found"}`.
    public func handle(_ request: ServerRequest) async -> ServerResponse {
        let method = request.method.uppercased()
        let pathSegments = Self.segments(of: request.path)
        var candidates = [method]
        if method == "HEAD" {
            candidates.append("GET")
        }
        for candidate in candidates {
            for route in routes where route.method == candidate {
                if let parameters = Self.match(route.segments, pathSegments) {
                    return await route.handler(request, parameters)
                }
            }
        }
        return .json(#"{"error":"not found"}"#, status: 404)
    }

    private static func segments(of path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    private static func match(_ pattern: [Segment], _ path: [String]) -> [String: String]? {
        guard pattern.count == path.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, value) in zip(pattern, path) {
            switch segment {
            case .literal(let literal):
                guard literal == value else { return nil }
            case .parameter(let name):
                parameters[name] = PercentDecoding.decode(value)
            }
        }
        return parameters
    }
}
