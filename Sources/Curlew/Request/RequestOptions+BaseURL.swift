enum BaseURLKey: RequestOptionKey {
    static let defaultValue: String? = nil
}

extension RequestOptions {
    /// The base URL the endpoint's relative path goes under for this call, instead of the client's
    /// ``ClientConfiguration/baseURL``. An absolute path ignores it. Default: `nil`, the
    /// client's base URL.
    ///
    /// ```swift
    /// enum Hosts { static let cdn = "https://cdn.example.com/v1" }
    /// struct Banner: Endpoint {
    ///     typealias Response = Data
    ///     var path: String { "banner.png" }
    ///     var options: RequestOptions { var o = RequestOptions(); o.baseURL = Hosts.cdn; return o }
    /// }
    /// ```
    ///
    /// The call gets the client's token, signature and common arguments only when the base URL's
    /// origin is trusted: list your own secondary and CDN hosts in
    /// ``ClientConfiguration/trustedOrigins`` (or this call's ``trustedOrigins``); a third-party
    /// CDN left out gets none of them, and a login-required call there fails with `.notLoggedIn`
    /// before anything is sent. A ``FailoverMiddleware`` moves only URLs under its own base URLs,
    /// so such a call goes where it says.
    public var baseURL: String? {
        get { self[BaseURLKey.self] }
        set { self[BaseURLKey.self] = newValue }
    }
}
