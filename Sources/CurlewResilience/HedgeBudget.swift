/// How many hedges the calls so far have earned, as a value: a token bucket that every call
/// fills by ``HedgingMiddleware/budget`` and every hedge empties by one, holding at most
/// ``HedgingMiddleware/burst`` (and starting full). Over `n` calls at most `burst + budget · n`
/// hedges go out, so a slow origin never gets more than that share of extra requests.
struct HedgeBudget: Sendable, Equatable {
    /// What a call earns, in thousandths of a hedge (integers: ten calls at 0.1 make exactly one).
    let perCall: Int
    /// The most that can be saved up, in thousandths.
    let capacity: Int
    /// What is saved up now, in thousandths.
    private(set) var thousandths: Int

    /// A full bucket; `ratio` within 0…1 and `burst` zero or more (``HedgingMiddleware`` refuses
    /// other settings and builds its budget only from ones it accepts).
    init(ratio: Double, burst: Int) {
        self.perCall = Int((ratio * 1000).rounded())
        // Saturating: a burst of `.max` is "no limit", not an overflow.
        let (product, overflow) = burst.multipliedReportingOverflow(by: 1000)
        self.capacity = overflow ? .max : product
        self.thousandths = self.capacity
    }

    /// Whole hedges saved up.
    var tokens: Int { thousandths / 1000 }

    /// A call starts: it earns its share of a hedge.
    mutating func deposit() {
        thousandths = capacity - thousandths <= perCall ? capacity : thousandths + perCall
    }

    /// Takes one hedge when the budget has one.
    mutating func withdraw() -> Bool {
        guard thousandths >= 1000 else { return false }
        thousandths -= 1000
        return true
    }
}
