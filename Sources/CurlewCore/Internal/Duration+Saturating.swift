extension Duration {
    /// Whole milliseconds, saturating at `Int64.max` (`Int64.min`): a setting of
    /// `.seconds(Int64.max)`, meaning "forever", has no millisecond count, and its conversion
    /// must not stop the process.
    package var saturatingMilliseconds: Int64 { Self.saturating(components, unitsPerSecond: 1_000, attosecondsPerUnit: 1_000_000_000_000_000) }

    /// Whole nanoseconds, saturating like ``saturatingMilliseconds`` (`Int64.max` is about 292 years).
    package var saturatingNanoseconds: Int64 { Self.saturating(components, unitsPerSecond: 1_000_000_000, attosecondsPerUnit: 1_000_000_000) }

    private static func saturating(_ parts: (seconds: Int64, attoseconds: Int64), unitsPerSecond: Int64, attosecondsPerUnit: Int64) -> Int64 {
        let (whole, overflow) = parts.seconds.multipliedReportingOverflow(by: unitsPerSecond)
        if overflow { return parts.seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = whole.addingReportingOverflow(parts.attoseconds / attosecondsPerUnit)
        if sumOverflow { return parts.attoseconds < 0 ? .min : .max }
        return sum
    }
}
