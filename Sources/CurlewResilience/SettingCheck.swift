internal import Curlew

/// The first setting of a resilience middleware it cannot honour, found once when the middleware
/// is built. The middleware then fails every call with it before anything is sent: a value that
/// was clamped or taken at its word (a negative break, a ratio of 2, NaN) is a mistake the
/// caller hears about, not one the middleware hides.
struct SettingCheck: Sendable {
    /// The settings' owner in messages, e.g. `CircuitBreakerMiddleware.Policy`.
    let owner: String
    /// The error for the first setting refused; `nil` when every setting holds.
    private(set) var refusal: CurlewError?

    init(_ owner: String) {
        self.owner = owner
    }

    /// Refuses `setting` (with its `value`) unless `holds`: "`owner`.`setting` must be `rule`,
    /// not `value`; nothing was sent". Only the first refusal is kept.
    mutating func require(_ holds: Bool, _ setting: String, _ rule: String, _ value: @autoclosure () -> String) {
        guard refusal == nil, !holds else { return }
        var error = CurlewError(
            code: .invalidConnectionSettings, message: "\(owner).\(setting) must be \(rule), not \(value()); nothing was sent")
        error.stage = .configuration
        refusal = error
    }
}
