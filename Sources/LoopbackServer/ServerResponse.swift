/// The answer a ``LoopbackServer`` handler gives to one request.
///
/// `.bytes` bodies are sent with `Content-Length`; `.stream` bodies use chunked transfer-encoding
/// unless the headers contain a `Content-Length`, in which case the bytes are written raw.
public struct ServerResponse: Sendable {
    /// How the body is produced.
    public enum Body: Sendable {
        /// A complete body, sent with `Content-Length`.
        case bytes([UInt8])
        /// A body produced piece by piece; the response ends when the closure returns.
        ///
        /// If the closure throws, the connection is closed without finishing the response.
        case stream(@Sendable (ResponseBodyWriter) async throws -> Void)
    }

    /// The status code, e.g. `200`.
    public var status: Int
    /// Header fields, sent in this order and with this spelling.
    ///
    /// The server adds `Content-Length` (for `.bytes`, unless present), `Transfer-Encoding`
    /// (for `.stream` without `Content-Length`) and `Connection` when needed.
    /// A `Connection: close` header here makes the server close the connection after the response.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Body

    /// Creates a response with a complete body.
    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// Creates a response with any kind of body.
    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: Body) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response: `text` as the body, `Content-Type: application/json`.
    public static func json(_ text: String, status: Int = 200) -> ServerResponse {
        ServerResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
    }

    /// A plain-text response: `text` as the body, `Content-Type: text/plain; charset=utf-8`.
    public static func text(_ text: String, status: Int = 200) -> ServerResponse {
        ServerResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(text.utf8))
    }

    /// A streamed response; `body` writes the chunks and the response ends when it returns.
    public static func stream(
        status: Int = 200,
        headers: [(name: String, value: String)] = [],
        _ body: @escaping @Sendable (ResponseBodyWriter) async throws -> Void
    ) -> ServerResponse {
        ServerResponse(status: status, headers: headers, body: .stream(body))
    }

    /// A redirect to `location` (sent verbatim in the `Location` header) with an empty body.
    public static func redirect(to location: String, status: Int = 302) -> ServerResponse {
        ServerResponse(status: status, headers: [("Location", location)])
    }

    /// The first value of the header `name` (case-insensitive), or `nil`.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}
