extension CurlewError {
    /// A setting a middleware cannot honour, refused rather than clamped: "`setting` must be
    /// `rule`, not `value`; nothing was sent", `.invalidConnectionSettings` at stage
    /// `configuration`, like the resilience middleware's refusals.
    static func refusedSetting(_ setting: String, _ rule: String, _ value: String, request: RequestSummary?) -> CurlewError {
        var error = CurlewError(code: .invalidConnectionSettings, message: "\(setting) must be \(rule), not \(value); nothing was sent", request: request)
        error.stage = .configuration
        return error
    }
}
