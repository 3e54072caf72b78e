public import ServiceLifecycle
internal import Synchronization
public import UnixSignals

/// A transport a service owns, run as a swift-service-lifecycle `Service` that shuts down
/// gracefully: its own ``CurlTransport`` (engine thread `curlew-engine`), not the process-wide
/// ``CurlTransport/shared``.
///
/// ```swift
/// let upstream = TransportService(gracePeriod: .seconds(10))
/// let client = APIClient(baseURL: "https://quotes.example.com", transport: upstream)
/// let group = ServiceGroup(configuration: .init(
///     services: [upstream, app],              // the transport first: it stops after the server
///     gracefulShutdownSignals: [.sigterm], logger: logger))
/// try await group.run()
/// ```
///
/// **The drain** begins at the first of: one of ``drainSignals`` arriving, ``beginDrain()``, or
/// the service's own graceful shutdown. From then on every call — in flight or new — has the
/// rest of ``gracePeriod`` as its deadline: whatever is still running when it ends fails with
/// ``/CurlewCore/CurlewError/Code/shutdown`` and a message saying the grace period ended. So one hung
/// upstream call cannot outlast the grace period the platform gives the process (Kubernetes
/// sends SIGKILL 30 s after SIGTERM by default).
///
/// On the service's graceful shutdown (or ``shutdown()``):
/// 1. new requests fail at once with ``/CurlewCore/CurlewError/Code/shutdown`` (nothing is sent);
/// 2. requests in flight **drain**: they finish normally until the drain's deadline;
/// 3. whatever is still running then fails with ``/CurlewCore/CurlewError/Code/shutdown`` and the engine
///    threads stop.
/// If the service's task is cancelled (the group's own shutdown timeout, another service failed)
/// step 2 is cut short.
///
/// A `ServiceGroup` shuts its services down in reverse order, waiting for each: list the
/// transport **before** the HTTP server, so the server stops accepting and finishes its requests
/// (and their upstream calls) before the transport stops. Listed after it, the transport stops
/// first and upstream calls made by requests the server is still finishing fail with `.shutdown`.
/// Because the group tells the transport only once the server has finished, pass the group's
/// signal as ``drainSignals`` so the grace period starts with the signal, bounding the calls the
/// server's handlers are still making:
///
/// ```swift
/// let upstream = TransportService(gracePeriod: .seconds(20), drainSignals: [.sigterm])
/// ```
///
/// A streamed response (``APIClient/stream(_:highWaterMark:options:)``) counts as in flight
/// until its body ends — read to the end, failed, or cancelled or dropped by its reader — so a
/// reader still consuming a body keeps the drain waiting (for up to ``gracePeriod``, after which
/// the body fails with `.shutdown`); a download
/// (``APIClient/download(_:to:options:adjust:)``) until its file is complete.
public final class TransportService: Transport, Service {
    /// The transport requests go through.
    public let transport: CurlTransport
    /// How long in-flight requests may take to finish once graceful shutdown begins.
    public let gracePeriod: Duration
    /// Signals that begin the drain while the service runs (``run()``), before the service's own
    /// graceful shutdown reaches it.
    public let drainSignals: [UnixSignal]
    /// Where ``run()`` records the transport's ``CurlTransport/connectionStatistics`` once a
    /// second: the gauges `curlew_connections_open`, `curlew_connections_idle`,
    /// `curlew_transfers_in_flight` and `curlew_transfers_queued_for_connection`, and the counter
    /// `curlew_connect_retries_total`. Recorded while the service runs, whether or not calls
    /// are made, so the idle count falls to zero after the idle timeout
    /// (``CurlTransport/Configuration/idleConnectionTimeout``). Nothing is recorded with no
    /// metrics system bootstrapped, or with ``CurlewInstrumentation/disabled``.
    public let instrumentation: CurlewInstrumentation
    private let state = Mutex(DrainState())

    /// Creates a service owning a new ``CurlTransport`` with `configuration`.
    /// - Parameters:
    ///   - configuration: Connection limits of the new transport.
    ///   - gracePeriod: How long calls may take to finish once the drain begins. Default: 10 s.
    ///   - drainSignals: Signals that begin the drain while the service runs, usually the
    ///     `ServiceGroup`'s graceful shutdown signals. Default: none (the drain begins with the
    ///     service's own graceful shutdown). Watching a signal does not handle it: the group
    ///     must still shut down on it.
    ///   - instrumentation: Where the connection gauges go (``instrumentation``). Default: the
    ///     process-wide metrics system.
    public convenience init(
        configuration: CurlTransport.Configuration = .init(), gracePeriod: Duration = .seconds(10),
        drainSignals: [UnixSignal] = [], instrumentation: CurlewInstrumentation = .system
    ) {
        self.init(
            transport: CurlTransport(configuration: configuration), gracePeriod: gracePeriod, drainSignals: drainSignals,
            instrumentation: instrumentation)
    }

    /// Creates a service around `transport`, which it shuts down when the service stops.
    public init(
        transport: CurlTransport, gracePeriod: Duration = .seconds(10), drainSignals: [UnixSignal] = [],
        instrumentation: CurlewInstrumentation = .system
    ) {
        self.transport = transport
        self.gracePeriod = gracePeriod
        self.drainSignals = drainSignals
        self.instrumentation = instrumentation
    }

    /// How many requests are in flight (sent, not yet answered, or with a streamed body not yet
    /// ended).
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// Whether graceful shutdown has begun (new requests are refused).
    public var isShuttingDown: Bool { state.withLock { !$0.accepting } }

    /// Whether the service watches its ``drainSignals`` (registered with the system; tests).
    var isWatchingDrainSignals: Bool { state.withLock { $0.watchingSignals } }

    /// Whether the drain has begun (every call has the rest of the grace period as deadline).
    public var isDraining: Bool { state.withLock { $0.drainDeadline != nil } }

    /// Begins the drain now, if it has not begun: every call in flight and every call made from
    /// now on fails with ``/CurlewCore/CurlewError/Code/shutdown`` once ``gracePeriod`` has passed. Calls are
    /// still accepted until the service's graceful shutdown (``shutdown()``), so an HTTP server
    /// finishing its requests can still make its upstream calls. Safe to call more than once
    /// and from any task.
    public func beginDrain() {
        _ = drainDeadline()
    }

    /// The drain's deadline, starting the drain if needed.
    private func drainDeadline() -> ContinuousClock.Instant {
        let now = ContinuousClock.now
        let (deadline, started) = state.withLock { state -> (ContinuousClock.Instant, Bool) in
            if let deadline = state.drainDeadline { return (deadline, false) }
            state.drainDeadline = now + gracePeriod
            return (now + gracePeriod, true)
        }
        if started {
            let grace = UInt64(max(0, gracePeriod.saturatingNanoseconds))
            let (due, overflow) = EngineClock.now().addingReportingOverflow(grace)
            transport.engines.impose(
                deadline: overflow ? .max : due,
                message: "the transport service is shutting down and its grace period of \(gracePeriod) ended before the call finished")
        }
        return deadline
    }

    /// Sends through ``transport``; fails at once with `.shutdown` once shutdown has begun.
    public nonisolated(nonsending) func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse {
        guard state.withLock({ $0.begin() }) else {
            throw CurlewError(code: .shutdown, message: "the transport service is shutting down", request: request.summary)
        }
        let raw: RawResponse
        do {
            raw = try await transport.send(request, context: context)
        } catch {
            finishOne()
            throw error
        }
        // A streamed body is in flight until it ends (read to the end, failed or cancelled).
        if case .stream(let body) = raw.content {
            body.whenEnded { [weak self] _ in self?.finishOne() }
        } else {
            finishOne()
        }
        return raw
    }

    /// Counts a request out, waking the drain when it was the last.
    private func finishOne() {
        let waiters = state.withLock { $0.end() }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs until graceful shutdown (or cancellation), then drains and stops the transport.
    /// Meanwhile one of ``drainSignals`` begins the drain, and the connection gauges are recorded
    /// (``instrumentation``).
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            if let factory = instrumentation.activeMetricsFactory {
                group.addTask {
                    var meter = ConnectionMeter(factory: factory)
                    while true {
                        meter.record(self.transport.connectionStatistics)
                        do { try await Task.sleep(for: .seconds(1)) } catch { return }
                    }
                }
            }
            if !drainSignals.isEmpty {
                group.addTask {
                    let signals = await UnixSignalsSequence(trapping: self.drainSignals)
                    self.state.withLock { $0.watchingSignals = true }
                    for await _ in signals {
                        self.beginDrain()
                        return
                    }
                }
            }
            // Returns on graceful shutdown, throws on cancellation: drain either way (a cancelled
            // drain ends at once).
            try? await gracefulShutdown()
            group.cancelAll()
        }
        await shutdown()
    }

    /// Refuses new requests, begins the drain if it has not begun, lets in-flight requests
    /// finish until its deadline (the rest of ``gracePeriod``), then fails the rest with
    /// `.shutdown` and stops the engine threads. Safe to call more than once.
    public func shutdown() async {
        state.withLock { $0.accepting = false }
        let deadline = drainDeadline()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitUntilIdle() }
            group.addTask { try? await CallDeadline.sleep(until: deadline) }
            _ = await group.next()
            group.cancelAll()
        }
        await transport.shutdown()
    }

    /// Suspends until no request is in flight (or the task is cancelled).
    private func waitUntilIdle() async {
        let id = state.withLock { $0.nextWaiterID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if Task.isCancelled || !state.withLock({ $0.addIdleWaiter(id, continuation) }) { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.removeIdleWaiter(id) }?.resume()
        }
    }
}

/// The in-flight count and the tasks waiting for it to reach zero (guarded by the service's mutex).
struct DrainState: ~Copyable {
    var accepting = true
    /// When the drain's grace period ends, once the drain has begun.
    var drainDeadline: ContinuousClock.Instant?
    /// Whether ``TransportService/drainSignals`` are being watched (tests).
    var watchingSignals = false
    var inFlight = 0
    private var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var lastWaiterID: UInt64 = 0

    /// Counts a request in; `false` once shutdown began.
    mutating func begin() -> Bool {
        guard accepting else { return false }
        inFlight += 1
        return true
    }

    /// Counts a request out; returns the waiters to resume when none is left.
    mutating func end() -> [CheckedContinuation<Void, Never>] {
        inFlight -= 1
        guard inFlight == 0, !waiters.isEmpty else { return [] }
        defer { waiters.removeAll() }
        return Array(waiters.values)
    }

    mutating func nextWaiterID() -> UInt64 {
        lastWaiterID += 1
        return lastWaiterID
    }

    /// Adds a waiter; `false` (resume it now) when nothing is in flight.
    mutating func addIdleWaiter(_ id: UInt64, _ continuation: CheckedContinuation<Void, Never>) -> Bool {
        guard inFlight > 0 else { return false }
        waiters[id] = continuation
        return true
    }

    mutating func removeIdleWaiter(_ id: UInt64) -> CheckedContinuation<Void, Never>? {
        waiters.removeValue(forKey: id)
    }
}
