/// A small deterministic generator (SplitMix64): the same seed gives the same values on every
/// platform and run, unlike `Hasher`, which is seeded per process.
struct SeededRandom {
    private var state: UInt64

    /// A generator for one value: the seed, the attempt and the value's path mixed with FNV-1a.
    init(seed: UInt64, attempt: Int, path: String) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: seed >> UInt64(shift))) }
        for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: UInt64(attempt) >> UInt64(shift))) }
        for byte in path.utf8 { mix(byte) }
        state = hash
    }

    mutating func next() -> UInt64 {
        state = state &+ 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// An integer in a range.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        let width = UInt64(bitPattern: Int64(range.upperBound) &- Int64(range.lowerBound)) &+ 1
        if width == 0 { return Int(truncatingIfNeeded: next()) }
        return range.lowerBound &+ Int(truncatingIfNeeded: next() % width)
    }

    /// A number in a range, rounded to two decimals.
    mutating func number(in range: ClosedRange<Double>) -> Double {
        let unit = Double(next() >> 11) / Double(1 << 53)
        return ((range.lowerBound + unit * (range.upperBound - range.lowerBound)) * 100).rounded() / 100
    }

    /// One of the elements.
    mutating func pick<T>(_ elements: [T]) -> T? {
        elements.isEmpty ? nil : elements[int(in: 0...(elements.count - 1))]
    }
}
