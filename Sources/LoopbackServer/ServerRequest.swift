/// One HTTP request as received by a ``LoopbackServer``: head and complete body.
///
/// Requests are recorded by the server (see ``LoopbackServer/requests``) once fully read and
/// before the handler runs, so tests can assert on exactly what a client sent.
public struct ServerRequest: Sendable {
    /// A name/value pair: a header field or a query item.
    public struct Field: Sendable, Hashable, CustomStringConvertible {
        /// The name as received (headers keep their original case).
        public var name: String
        /// The value.
        public var value: String

        /// Creates a pair.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        /// `name: value`.
        public var description: String {
            "\(name): \(value)"
        }
    }

    /// The request method, e.g. `"GET"`.
    public var method: String
    /// The raw request target, e.g. `"/search?key=a%20b"`.
    public var uri: String
    /// The part of ``uri`` before `?`, still percent-encoded.
    public var path: String
    /// The raw query after `?` (still percent-encoded), or `nil` when the target has no `?`.
    public var query: String?
    /// The query items, percent-decoded (`+` is *not* turned into a space), in order.
    ///
    /// An item without `=` has an empty value; empty items (`a&&b`) are skipped.
    public var queryItems: [Field]
    /// The header fields in the order they were received, names in their original case.
    public var headers: [Field]
    /// The complete request body.
    public var body: [UInt8]
    /// The number of body bytes received: `body.count`, or, for a body the server was told to
    /// count and drop (``LoopbackServer/start(host:port:discardingRequestBodies:handler:)``),
    /// the bytes dropped.
    public var bodyLength: Int
    /// The HTTP version as sent on the request line, e.g. `"HTTP/1.1"`.
    public var httpVersion: String
    /// The 1-based index of the TCP connection the request arrived on.
    public var connectionID: Int
    /// The connection the request arrived on; `await connection.closed()` to notice the client leaving.
    public var connection: ConnectionHandle

    /// Creates a request by hand, e.g. to unit-test a ``LoopbackRouter`` without a server.
    ///
    /// ``path``, ``query`` and ``queryItems`` are derived from `uri`.
    public init(
        method: String = "GET",
        uri: String,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        httpVersion: String = "HTTP/1.1",
        connection: ConnectionHandle = .detached()
    ) {
        self.init(
            method: method,
            uri: uri,
            headerFields: headers.map { Field(name: $0.name, value: $0.value) },
            body: body,
            httpVersion: httpVersion,
            connection: connection
        )
    }

    init(
        method: String,
        uri: String,
        headerFields: [Field],
        body: [UInt8],
        discardedBodyLength: Int? = nil,
        httpVersion: String,
        connection: ConnectionHandle
    ) {
        self.method = method
        self.uri = uri
        if let questionMark = uri.firstIndex(of: "?") {
            self.path = String(uri[..<questionMark])
            let query = String(uri[uri.index(after: questionMark)...])
            self.query = query
            self.queryItems = PercentDecoding.queryItems(query)
        } else {
            self.path = uri
            self.query = nil
            self.queryItems = []
        }
        self.headers = headerFields
        self.body = body
        self.bodyLength = discardedBodyLength ?? body.count
        self.httpVersion = httpVersion
        self.connectionID = connection.id
        self.connection = connection
    }

    /// The body decoded as UTF-8 (invalid bytes become U+FFFD).
    public var bodyText: String {
        String(decoding: body, as: UTF8.self)
    }

    /// The first value of the header `name` (case-insensitive), or `nil`.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// Every value of the header `name` (case-insensitive), in order.
    public func headerValues(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// The first value of the query item `name` (exact, after percent-decoding), or `nil`.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }
}
