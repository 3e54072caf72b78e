/// The option that marks a download exchange the download may still start over
/// (``RequestOptions/mayRestartOnResourceChange``).
enum RestartableExchangeOptionKey: RequestOptionKey {
    static let defaultValue = false
}

extension RequestOptions {
    /// Set by ``APIClient/download(_:to:options:adjust:)`` on a resumed exchange it will start over
    /// when the file changed on the server (`.resourceChanged`): such a failure is not the call's
    /// end, so it is neither reported as `.failed` nor handed to ``Endpoint/didFail(_:)``.
    var mayRestartOnResourceChange: Bool {
        get { self[RestartableExchangeOptionKey.self] }
        set { self[RestartableExchangeOptionKey.self] = newValue }
    }
}
