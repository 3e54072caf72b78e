/// Decides when a transfer has been idle for too long: no byte received or sent for `timeout`.
///
/// A pure value: the engine samples each transfer's byte counters a few times a second and asks
/// the tracker whether the deadline passed. libcurl's own low-speed limit averages speed over a
/// window of seconds, so one early chunk could hide a stall for several seconds; this does not.
package struct IdleTracker {
    /// The idle allowance in nanoseconds.
    package let timeoutNanoseconds: UInt64
    /// The byte count last seen: none when the clock starts, so a first sample that finds
    /// nothing moved is no activity and the clock runs from `now`, not from that sample.
    private var lastBytes: Int64 = 0
    private var lastActivity: UInt64

    package init(timeoutNanoseconds: UInt64, now: UInt64) {
        self.timeoutNanoseconds = timeoutNanoseconds
        self.lastActivity = now
    }

    /// Records the transfer's total bytes moved so far; returns `true` once it has been idle for
    /// longer than the timeout.
    package mutating func observe(bytesMoved: Int64, now: UInt64) -> Bool {
        if bytesMoved != lastBytes {
            lastBytes = bytesMoved
            lastActivity = now
            return false
        }
        return now &- lastActivity > timeoutNanoseconds
    }
}
