/// The call-name option (``RequestOptions/requestName``).
enum RequestNameOptionKey: RequestOptionKey {
    static let defaultValue: String? = nil
}

extension RequestOptions {
    /// The name this call's events, log lines, metrics and spans carry instead of the endpoint
    /// type's name; `nil` (the default) keeps the type's name.
    ///
    /// For a generic endpoint type that stands for many operations — `CurlewOpenAPI`'s transport
    /// sends every generated operation through one type and names each call after its
    /// `operationID`. Keep the set of names small: metrics are labelled with it.
    package var requestName: String? {
        get { self[RequestNameOptionKey.self] }
        set { self[RequestNameOptionKey.self] = newValue }
    }
}
