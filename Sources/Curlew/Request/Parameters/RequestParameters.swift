/// A request's parameters after they were collected from its declarations and before they are
/// encoded; ``Endpoint/setUpParameters(_:)`` may change them (add a signature, a timestamp…).
///
/// ```swift
/// func setUpParameters(_ parameters: inout RequestParameters) throws {
///     parameters.query["ts"] = .int(1_700_000_000)
///     let canonical = try parameters.query.percentEncoded(options: parameters.options)
///     parameters.query["sign"] = .string(hmac(canonical))
/// }
/// ```
public struct RequestParameters: Sendable {
    /// Values for the URL query (`@Query`), on any method.
    public var query = ParameterList()
    /// Body values (`@Field` and ``Endpoint/parameters``), encoded per ``encoding``.
    public var fields = ParameterList()
    /// Header values (`@Header`).
    public var headers = ParameterList()
    /// Values for the `{name}` placeholders of ``Endpoint/path`` (`@Path`).
    public var path = ParameterList()
    /// How ``fields`` are encoded.
    public var encoding: ParameterEncoding
    /// How values are written.
    public var options: ParameterEncodingOptions

    /// Creates an empty set of parameters.
    public init(encoding: ParameterEncoding, options: ParameterEncodingOptions = .default) {
        self.encoding = encoding
        self.options = options
    }

    /// Whether there are no parameters at all.
    public var isEmpty: Bool { query.isEmpty && fields.isEmpty && headers.isEmpty && path.isEmpty }
}
