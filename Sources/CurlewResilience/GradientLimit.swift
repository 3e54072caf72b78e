/// One origin's gradient concurrency limit, as a value: the gradient controller of Envoy's
/// adaptive concurrency filter, with the smoothing of Netflix's `Gradient2Limit`. It never reads
/// a clock: latencies come in measured, and every interval is counted in calls.
///
/// - **Baseline.** The latency of the origin unloaded: in a *probe* the limit is pinned to
///   ``AdaptiveConcurrencyMiddleware/Policy/Gradient/probeConcurrency`` until
///   ``AdaptiveConcurrencyMiddleware/Policy/Gradient/probeSamples`` calls that started during the
///   probe have ended; the ``AdaptiveConcurrencyMiddleware/Policy/Gradient/percentile`` of their
///   latencies is the baseline. A probe runs first, again every
///   ``AdaptiveConcurrencyMiddleware/Policy/Gradient/probeInterval`` calls, and whenever the limit
///   has sat at its minimum for five windows (the origin may have become slower for good).
/// - **Windows.** Between probes, calls are measured in windows of `max(limit, minimumWindow)`
///   calls, about one round of the limit. At the end of a window its latency (the same
///   percentile) gives the gradient `baseline × (1 + tolerance) / latency`, clamped to 0.5…2
///   (0.5 when a call in the window was dropped), and the limit becomes
///   `limit × gradient + √limit`, smoothed: `limit × (1 − smoothing) + that × smoothing`. The
///   limit does not rise after a window in which the origin was never busy (fewer than half the
///   limit in flight).
///
/// The `√limit` term lets the limit grow while latency stays at the baseline; the limit settles
/// where latency is `1 / (1 − 1/√limit)` times the baseline (1.33× at 16, 1.11× at 100).
///
/// Why the baseline is measured in probes and not, as in `Gradient2Limit`, an exponential average
/// of every call's latency: under sustained overload such an average takes in the queueing delay
/// it is meant to detect, the gradient returns to 1 and the limit climbs again. Against a server
/// that slows above 16 calls at once, that average (``AdaptiveConcurrencyMiddleware/Policy/Gradient/averagedBaselineWindows``)
/// let the limit creep from 20 to about 58 in 4,000 calls, while the probed baseline held it
/// near 21 (BENCHMARKS.md, "Resilience").
struct GradientLimit: Sendable, Equatable {
    typealias Options = AdaptiveConcurrencyMiddleware.Policy.Gradient

    let options: Options
    let minimumLimit: Int
    let maximumLimit: Int
    /// The limit between probes, fractional so that small steps add up.
    private(set) var limit: Double
    /// The unloaded latency of the last probe; `nil` before the first probe ends.
    private(set) var baseline: Duration?
    /// Whether a probe is running (the limit pinned to the probe's concurrency).
    private(set) var probing = true
    /// Counts probes; a call carries the generation it started in, and only calls that started in
    /// the running probe are the probe's samples.
    private(set) var generation = 0
    /// The latencies (nanoseconds) of the probe or window under way.
    private var samples: [Int64] = []
    /// Whether a call of the window under way was dropped.
    private var windowDropped = false
    /// Whether the origin was busy during the window under way.
    private var windowBusy = false
    /// Calls measured since the last probe ended.
    private var sinceProbe = 0
    /// Consecutive windows that left the limit at its minimum.
    private var windowsAtMinimum = 0
    /// The averaged baseline in nanoseconds (``AdaptiveConcurrencyMiddleware/Policy/Gradient/averagedBaselineWindows``).
    private var average: Double?

    init(options: Options, initialLimit: Int, minimumLimit: Int, maximumLimit: Int) {
        self.options = options
        self.minimumLimit = minimumLimit
        self.maximumLimit = maximumLimit
        self.limit = Double(initialLimit)
        self.probing = options.averagedBaselineWindows == nil
    }

    /// The whole number of calls allowed at once: the probe's concurrency while probing, never
    /// below the minimum limit nor above the maximum.
    var capacity: Int {
        probing ? max(1, minimumLimit, min(options.probeConcurrency, maximumLimit)) : steadyCapacity
    }

    /// The whole number of calls allowed at once between probes.
    var steadyCapacity: Int { min(maximumLimit, max(minimumLimit, Int(limit))) }

    /// Calls in the window under way, and how many end it.
    var window: (count: Int, size: Int) { (samples.count, max(options.minimumWindow, Int(limit))) }

    /// Takes in one ended call: `latency` measured from when it took its slot, `dropped` for a
    /// call that says the origin is overloaded (a timeout, a reset, a 429 or 5xx), `busy` when at
    /// least half the limit was in flight as it ended, `generation` the ``generation`` it started
    /// in.
    mutating func record(latency: Duration, dropped: Bool, busy: Bool, generation started: Int) {
        let nanoseconds = max(0, latency.wholeNanoseconds)
        if probing {
            guard started == generation, !dropped else { return }
            samples.append(nanoseconds)
            guard samples.count >= options.probeSamples else { return }
            baseline = LatencyWindow.percentile(options.percentile, of: samples)
            probing = false
            samples = []
            sinceProbe = 0
            windowsAtMinimum = 0
            return
        }
        sinceProbe += 1
        samples.append(nanoseconds)
        windowDropped = windowDropped || dropped
        windowBusy = windowBusy || busy
        if samples.count >= window.size { endWindow() }
        guard options.averagedBaselineWindows == nil else { return }
        if sinceProbe >= options.probeInterval || windowsAtMinimum >= 5 { startProbe() }
    }

    /// Moves the limit by the window's gradient and starts the next window.
    private mutating func endWindow() {
        defer {
            samples = []
            windowDropped = false
            windowBusy = false
        }
        guard let latency = LatencyWindow.percentile(options.percentile, of: samples) else { return }
        let measured = Double(max(1, latency.wholeNanoseconds))
        var highest = 2.0
        if let windows = options.averagedBaselineWindows {
            // Gradient2: the first window starts the average; each moves it by 2 / (windows + 1).
            let factor = 2 / Double(windows + 1)
            var next = average.map { $0 * (1 - factor) + measured * factor } ?? measured
            if next / measured > 2 { next *= 0.9 }
            average = next
            baseline = .nanoseconds(Int64(next))
            highest = 1
        }
        guard let baseline else { return }
        let gradient: Double
        if windowDropped {
            gradient = 0.5
        } else {
            let expected = Double(baseline.wholeNanoseconds) * (1 + options.tolerance)
            gradient = min(highest, max(0.5, expected / measured))
        }
        var target = limit * gradient + limit.squareRoot()
        if !windowBusy { target = min(target, limit) }
        let smoothed = limit * (1 - options.smoothing) + target * options.smoothing
        limit = min(Double(maximumLimit), max(Double(minimumLimit), smoothed))
        windowsAtMinimum = Int(limit) <= minimumLimit ? windowsAtMinimum + 1 : 0
    }

    /// Pins the limit to the probe's concurrency until the next baseline is measured.
    private mutating func startProbe() {
        probing = true
        generation += 1
        samples = []
        windowDropped = false
        windowBusy = false
    }
}
