internal import Foundation

extension CurlTransport.Configuration {
    /// The first setting the transport cannot honour, as the error every call through it fails
    /// with; `nil` when every setting is in range. Checked once, when the transport is created.
    func refusal() -> CurlewError? {
        func refused(_ setting: String, _ rule: String, _ value: String) -> CurlewError {
            .refusedSetting("CurlTransport.Configuration.\(setting)", rule, value, request: nil)
        }
        if let engineCount, engineCount < 1 {
            return refused("engineCount", "at least 1 (nil runs one engine per processor)", "\(engineCount)")
        }
        if maximumCachedConnections < 1 { return refused("maximumCachedConnections", "at least 1", "\(maximumCachedConnections)") }
        if let maximumConnectionsPerHost, maximumConnectionsPerHost < 1 {
            return refused("maximumConnectionsPerHost", "at least 1 (nil for no limit)", "\(maximumConnectionsPerHost)")
        }
        if let maximumTotalConnections, maximumTotalConnections < 1 {
            return refused("maximumTotalConnections", "at least 1 (nil for no limit)", "\(maximumTotalConnections)")
        }
        // Durations past 365 days have no millisecond count the engine could use.
        let longest = EasyHandleOptions.longestDuration
        if idleConnectionTimeout <= .zero { return refused("idleConnectionTimeout", "longer than zero", "\(idleConnectionTimeout)") }
        if idleConnectionTimeout > longest { return refused("idleConnectionTimeout", "at most 365 days", "\(idleConnectionTimeout)") }
        let retry = connectRetry
        if retry.maximumAttempts < 1 {
            return refused("connectRetry.maximumAttempts", "at least 1 (1 turns connection retries off)", "\(retry.maximumAttempts)")
        }
        if retry.initialDelay < .zero { return refused("connectRetry.initialDelay", "zero or more", "\(retry.initialDelay)") }
        if retry.maximumDelay < .zero { return refused("connectRetry.maximumDelay", "zero or more", "\(retry.maximumDelay)") }
        if retry.initialDelay > longest { return refused("connectRetry.initialDelay", "at most 365 days", "\(retry.initialDelay)") }
        if retry.maximumDelay > longest { return refused("connectRetry.maximumDelay", "at most 365 days", "\(retry.maximumDelay)") }
        if !(0...1).contains(retry.jitter) { return refused("connectRetry.jitter", "between 0 and 1", "\(retry.jitter)") }
        return nil
    }
}
