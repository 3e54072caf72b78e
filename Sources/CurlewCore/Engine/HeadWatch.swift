/// Decides when a response head is late: no byte of it arrived, and no byte of the request was
/// sent, for longer than the head timeout (``TransferOptions/headTimeout``, the server's time to
/// first byte after the last byte of the request).
///
/// A pure value, sampled by the engine with the idle clock: the transfer's bytes sent and head
/// bytes seen go in with the time, and it answers whether the head is late. The watch ends for
/// good with the first head byte — a stall after it is the idle timeout's — and a transfer Curlew
/// paused itself (a slow body producer) restarts its clock.
package struct HeadWatch {
    /// The allowance in nanoseconds.
    package let timeoutNanoseconds: UInt64
    private var sending: IdleTracker
    /// Whether a head byte arrived: the watch is over.
    package private(set) var ended = false

    package init(timeoutNanoseconds: UInt64, now: UInt64) {
        self.timeoutNanoseconds = timeoutNanoseconds
        self.sending = IdleTracker(timeoutNanoseconds: timeoutNanoseconds, now: now)
    }

    /// Starts the clock again at `now` (a new connection attempt, leaving a per-host queue).
    package mutating func restart(now: UInt64) {
        guard !ended else { return }
        sending = IdleTracker(timeoutNanoseconds: timeoutNanoseconds, now: now)
    }

    /// Records the transfer's state at `now`; returns `true` once the head is late.
    package mutating func observe(headBytes: Int, bytesSent: Int64, paused: Bool, now: UInt64) -> Bool {
        if ended { return false }
        if headBytes > 0 {
            ended = true
            return false
        }
        if paused {
            restart(now: now)
            return false
        }
        return sending.observe(bytesMoved: bytesSent, now: now)
    }
}
