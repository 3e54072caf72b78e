package import HTTPTypes

/// Keeps libcurl from silently sending a request a second time.
///
/// When a reused keep-alive connection turns out dead after the request was written and before
/// any response byte, libcurl 7.88 opens a new connection and sends the request again — fine for
/// a GET, not for a POST the server may already have acted on. For requests that must not be
/// resent behind the caller's back (a method that is not idempotent, or a body that cannot be
/// replayed), the transfer installs `CURLOPT_PREREQFUNCTION`, which libcurl calls once per
/// attempt, right before sending; a second call that is not a redirect hop is that silent resend,
/// and it is aborted with `.connectionClosedBeforeResponse`.
///
/// Connection reuse is untouched (no `CURLOPT_FRESH_CONNECT`), and idempotent requests with
/// replayable bodies — every GET — do not install the callback at all.
package struct ReplayGuard {
    /// Attempts libcurl started so far.
    private var attempts = 0
    /// libcurl's redirect count at the last attempt.
    private var redirectsAtLastAttempt = 0

    /// Whether a request needs the guard: its method is not idempotent (RFC 9110 §9.2.2) or its
    /// body cannot be sent twice.
    package static func isNeeded(method: HTTPRequest.Method, content: PreparedBody?) -> Bool {
        if let content, !content.isReplayable { return true }
        switch method {
        case .get, .head, .options, .trace, .put, .delete: return false
        default: return true
        }
    }

    /// libcurl is about to send an attempt; `redirects` is its `CURLINFO_REDIRECT_COUNT`.
    /// Returns `false` when this attempt is a silent resend that must not happen.
    package mutating func allowsAttempt(redirects: Int) -> Bool {
        attempts += 1
        defer { redirectsAtLastAttempt = redirects }
        return attempts == 1 || redirects > redirectsAtLastAttempt
    }
}
