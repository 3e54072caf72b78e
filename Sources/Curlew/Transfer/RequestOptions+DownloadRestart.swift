/// The option that marks a download exchange the download may still start over
/// (``RequestOptions/mayStartOver``).
enum RestartableExchangeOptionKey: RequestOptionKey {
    static let defaultValue = false
}

extension RequestOptions {
    /// Set by ``APIClient/download(_:to:options:adjust:)`` on a resumed exchange it will start over
    /// when the file changed on the server or its range cannot continue the partial file
    /// (`CurlewError.startsDownloadOver`): such a failure is not the call's
    /// end, so it is neither reported as `.failed` nor handed to ``Endpoint/didFail(_:)``.
    var mayStartOver: Bool {
        get { self[RestartableExchangeOptionKey.self] }
        set { self[RestartableExchangeOptionKey.self] = newValue }
    }
}

extension CurlewError {
    /// Whether a resumed download exchange that failed with this error starts the download over
    /// once: the file changed on the server (`.resourceChanged`), or the server's range cannot
    /// continue the partial file (`.rangeMismatch`).
    var startsDownloadOver: Bool { code == .resourceChanged || code == .rangeMismatch }
}
