/// A request's parameters after they were collected from its declarations (`@Query`, `@Field`,
/// `@Header`, `@Path`, ``Endpoint/parameters``) and before they are encoded.
package struct RequestParameters: Sendable {
    /// Values for the URL query (`@Query`), on any method.
    package var query = ParameterList()
    /// Body values (`@Field` and ``Endpoint/parameters``), encoded per ``encoding``.
    package var fields = ParameterList()
    /// Header values (`@Header`).
    package var headers = ParameterList()
    /// Values for the `{name}` placeholders of ``Endpoint/path`` (`@Path`).
    package var path = ParameterList()
    /// How ``fields`` are encoded.
    package var encoding: ParameterEncoding
    /// How values are written.
    package var options: ParameterEncodingOptions

    /// Creates an empty set of parameters.
    package init(encoding: ParameterEncoding, options: ParameterEncodingOptions = .default) {
        self.encoding = encoding
        self.options = options
    }

    /// Whether there are no parameters at all.
    package var isEmpty: Bool { query.isEmpty && fields.isEmpty && headers.isEmpty && path.isEmpty }
}
