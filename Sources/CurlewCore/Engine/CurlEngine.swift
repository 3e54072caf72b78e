internal import CCurlShim
internal import Foundation
internal import HTTPTypes
package import Synchronization
#if canImport(Glibc)
    internal import Glibc
#endif

/// One dedicated OS thread that owns a curl multi handle and every easy handle attached to it.
///
/// Other threads never touch libcurl state: they post commands into ``inbox`` (a `Mutex`) and
/// call `curl_multi_wakeup`, which libcurl documents as safe from any thread. The engine thread
/// loops on `curl_multi_poll`, applies commands, drives transfers and resumes continuations with
/// no lock held.
///
/// Thread-safety (why `@unchecked Sendable` is sound): `inbox` is a `Mutex`; `nextID` is an
/// `Atomic`; `statistics` holds only atomics; `multi` is set once in `init` and used off the
/// engine thread only for `curl_multi_wakeup`; `handles` is a pool guarded by its own `Mutex`; `transfers`, `hostQueues`,
/// `retrying` and `drainDeadline` are touched only by the engine thread (after `init`); `thread` and `startFailure` are written in `init` only (before any
/// other thread can see the engine) and read afterwards; `upkeep` is set in `init` and used only
/// by the engine thread.
package final class CurlEngine: @unchecked Sendable {
    /// A configured transfer travelling from a caller to the engine thread.
    package struct Job: Sendable {
        package let ticket: TransferTicket
        package let transfer: CurlEasyTransfer
    }

    /// Limits for the multi handle's connection cache.
    package struct Limits: Sendable, Hashable {
        package var maximumCachedConnections: Int
        package var maximumConnectionsPerHost: Int?
        package var maximumTotalConnections: Int?
        /// How long a cached connection may stay idle before the engine closes it.
        package var idleConnectionTimeout: Duration
        /// How failed connection attempts are retried.
        package var connectRetry: ConnectRetryPolicy

        package init(
            maximumCachedConnections: Int, maximumConnectionsPerHost: Int?, maximumTotalConnections: Int?,
            idleConnectionTimeout: Duration = .seconds(60), connectRetry: ConnectRetryPolicy = .standard
        ) {
            self.connectRetry = connectRetry
            self.maximumCachedConnections = maximumCachedConnections
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.maximumTotalConnections = maximumTotalConnections
            self.idleConnectionTimeout = idleConnectionTimeout
        }
    }

    package let inbox = PackageMutex(CurlEngineInbox())
    private let nextID = Atomic<UInt64>(1)
    /// Counters for tests and diagnostics (active and paused transfers, connections).
    package let statistics = EngineStatistics()
    private let handles: EasyHandlePool
    private let multi: UnsafeMutableRawPointer?
    private var thread: pthread_t?
    private var startFailure: String?
    /// Engine thread only, never re-entered while changed: no dynamic exclusivity checks.
    @exclusivity(unchecked) private var transfers = TransferTable<CurlEasyTransfer>()
    /// The engine thread's `pthread_self()`, set when it starts (0 before): work posted from the
    /// engine thread itself needs no wake-up.
    package let engineThreadID = Atomic<UInt>(0)
    /// Cache sizing and dead-connection sweeps (Connections/ConnectionUpkeep.swift).
    private let upkeep: ConnectionUpkeep?
    /// Curlew's own per-origin FIFO under the per-host cap, `nil` without a cap. Engine thread
    /// only, like `transfers`.
    @exclusivity(unchecked) private var hostQueues: HostQueues<CurlEasyTransfer>?
    /// Transfers waiting for their next connection attempt, with when it is due (``EngineClock``).
    /// Engine thread only.
    @exclusivity(unchecked) private var retrying: [(due: UInt64, id: UInt64, transfer: CurlEasyTransfer)] = []
    private let connectRetry: ConnectRetryPolicy
    /// When a draining transport's grace period ends, and the message its calls fail with.
    /// Engine thread only.
    @exclusivity(unchecked) private var drainDeadline: (at: UInt64, message: String)?

    package init(limits: Limits) {
        connectRetry = limits.connectRetry
        let idleSeconds = ConnectionHousekeeping.wholeSeconds(limits.idleConnectionTimeout)
        handles = EasyHandlePool(
            capacity: 256,
            setup: EngineHandleSetup(
                ledger: statistics.connections,
                maximumIdleSeconds: ConnectionHousekeeping.maximumAge(idleSeconds: idleSeconds)))
        guard CurlGlobal.initialized, let multi = curl_multi_init() else {
            self.multi = nil
            self.upkeep = nil
            self.startFailure = "libcurl could not be initialised"
            _ = inbox.withLock { inbox in inbox.requestShutdown() }
            _ = inbox.withLock { inbox in inbox.markStopped() }
            return
        }
        self.multi = multi
        self.hostQueues = limits.maximumConnectionsPerHost.flatMap { $0 > 0 ? HostQueues(cap: $0) : nil }
        self.upkeep = ConnectionUpkeep(
            multi: multi, floor: limits.maximumCachedConnections, idleTimeout: limits.idleConnectionTimeout,
            pool: handles, statistics: statistics)
        _ = curlew_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, limits.maximumConnectionsPerHost ?? 0)
        _ = curlew_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, limits.maximumTotalConnections ?? 0)
        _ = curlew_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))

        var thread = pthread_t()
        let retained = Unmanaged.passRetained(self)
        let result = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let engine = Unmanaged<CurlEngine>.fromOpaque(raw).takeRetainedValue()
                engine.run()
                return nil
            }, retained.toOpaque())
        if result == 0 {
            self.thread = thread
        } else {
            retained.release()
            self.startFailure = "could not start the engine thread (pthread_create: \(result))"
            curl_multi_cleanup(multi)
            _ = inbox.withLock { inbox in inbox.requestShutdown() }
            _ = inbox.withLock { inbox in inbox.markStopped() }
        }
    }

    // MARK: Caller side (any thread)

    /// Runs one exchange; cancellation of the calling task removes the transfer on the engine
    /// thread and throws `.cancelled`.
    ///
    /// With a `.stream` disposition it returns once the final head is complete and the body
    /// keeps arriving through the returned stream, whose cancellation (or loss) cancels the
    /// transfer.
    package nonisolated(nonsending) func execute(_ request: PreparedRequest, plan: TransferPlan) async throws -> CompletedTransfer {
        if let startFailure {
            throw CurlewError(code: .transportFailure, message: startFailure, request: request.summary)
        }
        let ticket = TransferTicket(id: nextID.wrappingAdd(1, ordering: .relaxed).oldValue)
        let completed = try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: CurlEasyTransfer.Continuation) in
                // Configure the easy handle here, on the caller's thread: the engine thread only
                // attaches it.
                let transfer: CurlEasyTransfer
                do {
                    transfer = try CurlEasyTransfer(
                        id: ticket.id, request: request, plan: plan, engine: self, pool: handles,
                        continuation: continuation)
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                // Marking the ticket submitted under the inbox lock orders a concurrent cancel
                // after this add: the engine always sees `.add` before `.cancel`.
                let job = Job(ticket: ticket, transfer: transfer)
                let action = inbox.withLock { inbox -> CurlEngineInbox.SubmitAction in
                    guard ticket.markSubmitted() else { return .rejectCancelled(job) }
                    return inbox.submit(job)
                }
                switch action {
                case .wake:
                    wake()
                case .none:
                    break
                case .rejectShutdown(let job):
                    job.transfer.fail(Self.shutdownError(request))
                case .rejectCancelled(let job):
                    job.transfer.fail(Self.cancellationError(request))
                }
            }
        } onCancel: {
            if ticket.markCancelled() { post(.cancel(ticket.id)) }
        }
        return completed
    }

    /// Easy handles kept for reuse now (tests: the pool is freed after the idle timeout).
    package var pooledHandles: Int { handles.idleCount }

    /// Ends every transfer still in flight at `deadline` (``EngineClock``), and every transfer
    /// submitted after it at once, with `.shutdown` and `message`: the bound of a drain.
    package func impose(deadline: UInt64, message: String) { post(.deadline(deadline, message: message)) }

    /// Resumes a paused transfer (for streaming sinks and request-body pumps).
    package func unpause(_ id: UInt64) { post(.unpause(id)) }

    /// Commands for one transfer, posted from other threads. They hold the engine object, not
    /// its thread: the owning transport's `deinit` shuts the engine down whoever holds it, and
    /// a command posted after shutdown is dropped by the inbox. (A `[weak self]` capture here
    /// made the optimiser warn, once inlined into `execute`, that the reference is always nil.)
    package func hooks(for id: UInt64) -> TransferHooks {
        TransferHooks(
            unpause: { self.post(.unpause(id)) },
            cancel: { self.post(.cancel(id)) })
    }

    /// Fails in-flight transfers with `.shutdown`, stops the thread and cleans up on it.
    /// Returns once the thread has exited; a second call returns once the first has finished.
    package func shutdown() async {
        let action = inbox.withLock { $0.requestShutdown() }
        if case .wakeAndJoin = action { wake() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !inbox.withLock({ $0.addStopWaiter(continuation) }) { continuation.resume() }
        }
        if case .wakeAndJoin = action, let thread {
            // The thread has resumed us as its last act; joining waits only for its return.
            pthread_join(thread, nil)
        }
    }

    /// Asks the engine to stop without waiting (used from `deinit` of an owning transport).
    package func requestShutdown() {
        let action = inbox.withLock { $0.requestShutdown() }
        if case .wakeAndJoin = action {
            wake()
            if let thread { pthread_detach(thread) }
        }
    }

    private func post(_ command: CurlEngineInbox.Command) {
        if inbox.withLock({ $0.post(command) }) { wake() }
    }

    package func wake() {
        // The engine thread checks its inbox before it sleeps: no wake-up from itself.
        guard !isEngineThread, let multi else { return }
        _ = curl_multi_wakeup(multi)
    }

    /// Whether the caller runs on the engine thread.
    package var isEngineThread: Bool {
        engineThreadID.load(ordering: .relaxed) == UInt(pthread_self())
    }

    // MARK: Engine thread

    private func run() {
        guard let multi else { return }
        EngineThreadName.apply()
        engineThreadID.store(UInt(pthread_self()), ordering: .relaxed)
        var running: Int32 = 0
        var nextIdleCheck: UInt64 = 0
        // The engine's halves of the inbox's double buffers (see `CurlEngineInbox.drain`).
        var commands: [CurlEngineInbox.Command] = []
        var jobs: [UnownedJob] = []
        while true {
            // Emptied only when used: `removeAll(keepingCapacity:)` does its work even on an
            // empty array, and most turns drain nothing of one kind.
            if !commands.isEmpty { commands.removeAll(keepingCapacity: true) }
            if !jobs.isEmpty { jobs.removeAll(keepingCapacity: true) }
            let shutdown = inbox.withLock { $0.drain(into: &commands, jobs: &jobs) }
            for command in commands { apply(command, multi: multi) }
            if shutdown {
                forward(jobs)
                break
            }
            if !jobs.isEmpty {
                // Tasks that prefer the engine (see `CurlEngine+Executor`); what they submit is
                // attached before libcurl runs, saving a loop.
                runJobs(jobs)
                if !commands.isEmpty { commands.removeAll(keepingCapacity: true) }
                inbox.withLock { $0.drainCommands(into: &commands) }
                for command in commands { apply(command, multi: multi) }
            }
            if !retrying.isEmpty { startDueRetries(multi: multi) }
            if let drainDeadline, !(transfers.isEmpty && retrying.isEmpty && (hostQueues?.queuedCount ?? 0) == 0),
                EngineClock.now() >= drainDeadline.at
            {
                failAtDeadline(multi: multi, message: drainDeadline.message)
            }
            _ = curl_multi_perform(multi, &running)
            collectFinished(multi: multi)
            if !transfers.isEmpty {
                let now = EngineClock.now()
                if now >= nextIdleCheck {
                    failIdleTransfers(multi: multi, now: now)
                    nextIdleCheck = now + Self.idleCheckInterval
                }
            }
            poll(multi: multi)
        }
        // Fail everything still in flight or waiting, then also any job posted in the same instant.
        for (_, transfer) in transfers.transfers {
            curl_multi_remove_handle(multi, transfer.handle)
            transfer.fail(Self.shutdownError(transfer.request))
        }
        transfers.removeAll()
        for (id, origin, transfer) in hostQueues?.waiting ?? [] {
            _ = hostQueues?.remove(id: id, origin: origin)
            transfer.fail(Self.shutdownError(transfer.request))
        }
        statistics.setQueued(0)
        for (_, _, transfer) in retrying { transfer.fail(Self.shutdownError(transfer.request)) }
        retrying.removeAll()
        statistics.setActive(0)
        var late: [CurlEngineInbox.Command] = []
        var lateJobs: [UnownedJob] = []
        _ = inbox.withLock { $0.drain(into: &late, jobs: &lateJobs) }
        for case .add(let job) in late { job.transfer.fail(Self.shutdownError(job.transfer.request)) }
        forward(lateJobs)
        upkeep?.stop(multi: multi)
        curl_multi_cleanup(multi)
        let waiters = inbox.withLock { $0.markStopped() }
        for waiter in waiters { waiter.resume() }
    }

    /// Connection upkeep, then `curl_multi_poll`: while transfers are active, wake at least as
    /// often as idle detection needs; with work already waiting (a task resumed above), only
    /// look at the sockets. While none is, also watch the idle connections' sockets.
    private func poll(multi: UnsafeMutableRawPointer) {
        let waiting = !inbox.withLock { $0.isEmpty }
        var timeout: Int32 = waiting ? 0 : transfers.isEmpty ? 1000 : Int32(Self.idleCheckInterval / 1_000_000)
        if timeout > 0, let due = retrying.lazy.map(\.due).min() {
            let now = EngineClock.now()
            timeout = due <= now ? 0 : Int32(min(UInt64(timeout), (due - now + 999_999) / 1_000_000))
        }
        guard let upkeep else {
            _ = curl_multi_poll(multi, nil, 0, timeout, nil)
            return
        }
        upkeep.tick(multi: multi, now: EngineClock.now(), inFlight: transfers.count)
        if transfers.isEmpty { statistics.quietWakeup() }
        if transfers.isEmpty, !upkeep.watched.isEmpty {
            var events: Int32 = 0
            upkeep.withWatched { fds, count in _ = curl_multi_poll(multi, fds, count, timeout, &events) }
            upkeep.afterPoll(events: events)
        } else {
            _ = curl_multi_poll(multi, nil, 0, timeout, nil)
        }
    }

    private func apply(_ command: CurlEngineInbox.Command, multi: UnsafeMutableRawPointer) {
        switch command {
        case .add(let job):
            let transfer = job.transfer
            guard transfer.attach() else { return }
            admit(transfer, id: job.ticket.id, multi: multi)
        case .cancel(let id):
            if let transfer = transfers.removeValue(forKey: id) {
                statistics.setActive(transfers.count)
                curl_multi_remove_handle(multi, transfer.handle)
                left(transfer, multi: multi)
                transfer.fail(Self.cancellationError(transfer.request), measured: true)
            } else if let index = retrying.firstIndex(where: { $0.id == id }) {
                let transfer = retrying.remove(at: index).transfer
                transfer.fail(Self.cancellationError(transfer.request))
            } else if let transfer = removeWaiting(id) {
                transfer.fail(Self.cancellationError(transfer.request))
            }
        case .unpause(let id):
            transfers[id]?.unpause()
        case .deadline(let at, let message):
            if drainDeadline.map({ at < $0.at }) ?? true { drainDeadline = (at, message) }
        }
    }

    // MARK: Admission

    /// Starts a transfer, or queues it behind its origin's running transfers when the per-host
    /// cap is reached (``HostQueues``).
    private func admit(_ transfer: CurlEasyTransfer, id: UInt64, multi: UnsafeMutableRawPointer) {
        if let drainDeadline, EngineClock.now() >= drainDeadline.at {
            statistics.transferDrained()
            transfer.fail(Self.drainError(transfer.request, message: drainDeadline.message))
            return
        }
        if hostQueues != nil {
            transfer.origin = HostQueues<CurlEasyTransfer>.origin(of: transfer.request.url)
            if hostQueues?.admit(transfer, id: id, origin: transfer.origin) == false {
                transfer.queuedAt = EngineClock.now()
                statistics.setQueued(hostQueues?.queuedCount ?? 0)
                return
            }
        }
        start(transfer, id: id, multi: multi)
    }

    /// Adds an admitted transfer to the multi handle.
    private func start(_ transfer: CurlEasyTransfer, id: UInt64, multi: UnsafeMutableRawPointer) {
        let added = curl_multi_add_handle(multi, transfer.handle)
        guard added == CURLM_OK else {
            let reason = String(cString: curl_multi_strerror(added))
            left(transfer, multi: multi)
            transfer.fail(CurlewError(code: .transportFailure, message: "curl_multi_add_handle: \(reason)", request: transfer.request.summary))
            return
        }
        transfers.insert(transfer, for: id)
        statistics.setActive(transfers.count)
        upkeep?.transferAdded(multi: multi, inFlight: transfers.count)
    }

    /// A transfer left the multi handle (finished, failed, cancelled): under a per-host cap the
    /// next transfer waiting for its origin starts now, on the connection it gave back.
    private func left(_ transfer: CurlEasyTransfer, multi: UnsafeMutableRawPointer) {
        guard hostQueues != nil, let next = hostQueues?.release(transfer.origin) else { return }
        statistics.setQueued(hostQueues?.queuedCount ?? 0)
        startWaited(next.transfer, id: next.id, multi: multi, now: EngineClock.now())
    }

    /// Starts a transfer that waited in a queue, with what is left of its total timeout.
    private func startWaited(_ transfer: CurlEasyTransfer, id: UInt64, multi: UnsafeMutableRawPointer, now: UInt64) {
        if let failure = transfer.leaveQueue(now: now) {
            left(transfer, multi: multi)
            transfer.fail(failure)
            return
        }
        start(transfer, id: id, multi: multi)
    }

    /// The drain's grace period ended: every transfer in flight, waiting for a connection or for
    /// its next connection attempt fails with `.shutdown`.
    private func failAtDeadline(multi: UnsafeMutableRawPointer, message: String) {
        var ended: [CurlEasyTransfer] = []
        for (_, transfer) in transfers.transfers {
            curl_multi_remove_handle(multi, transfer.handle)
            ended.append(transfer)
        }
        transfers.removeAll()
        statistics.setActive(0)
        for (id, origin, transfer) in hostQueues?.waiting ?? [] {
            _ = hostQueues?.remove(id: id, origin: origin)
            ended.append(transfer)
        }
        for (_, _, transfer) in retrying { ended.append(transfer) }
        retrying.removeAll()
        if let cap = hostQueues?.cap { hostQueues = HostQueues(cap: cap) }
        statistics.setQueued(0)
        for transfer in ended {
            statistics.transferDrained()
            transfer.fail(Self.drainError(transfer.request, message: message))
        }
    }

    /// Attaches the transfers whose next connection attempt is due.
    private func startDueRetries(multi: UnsafeMutableRawPointer) {
        let now = EngineClock.now()
        guard retrying.contains(where: { $0.due <= now }) else { return }
        let due = retrying.filter { $0.due <= now }
        retrying.removeAll { $0.due <= now }
        for (_, id, transfer) in due {
            if let failure = transfer.prepareNextAttempt(now: now) {
                transfer.fail(failure)
                continue
            }
            admit(transfer, id: id, multi: multi)
        }
    }

    /// Takes a transfer waiting for admission out of its queue.
    private func removeWaiting(_ id: UInt64) -> CurlEasyTransfer? {
        guard let queues = hostQueues, queues.queuedCount > 0,
            let entry = queues.waiting.first(where: { $0.id == id })
        else { return nil }
        let removed = hostQueues?.remove(id: id, origin: entry.origin)
        statistics.setQueued(hostQueues?.queuedCount ?? 0)
        return removed
    }

    /// Fails queued transfers whose total timeout passed while they waited.
    private func failExpiredWaiting(now: UInt64) {
        guard let queues = hostQueues, queues.queuedCount > 0 else { return }
        for (id, origin, transfer) in queues.waiting {
            guard let failure = transfer.queueTimeout(now: now) else { continue }
            _ = hostQueues?.remove(id: id, origin: origin)
            transfer.fail(failure)
        }
        statistics.setQueued(hostQueues?.queuedCount ?? 0)
    }

    /// A finished transfer multiplexed (HTTP/2): its origin is no longer held to one transfer
    /// per connection, so everything waiting for it starts.
    private func noteMultiplexing(_ transfer: CurlEasyTransfer, multi: UnsafeMutableRawPointer) {
        guard hostQueues != nil, transfer.multiplexed else { return }
        let started = hostQueues?.markMultiplexing(transfer.origin) ?? []
        statistics.setQueued(hostQueues?.queuedCount ?? 0)
        let now = EngineClock.now()
        for (id, next) in started { startWaited(next, id: id, multi: multi, now: now) }
    }

    /// How often the engine samples transfers for idle timeouts (nanoseconds).
    package static let idleCheckInterval: UInt64 = 100_000_000

    private func failIdleTransfers(multi: UnsafeMutableRawPointer, now: UInt64) {
        for (id, transfer) in transfers.transfers {
            guard let failure = transfer.idleFailure(now: now) else { continue }
            transfers.removeValue(forKey: id)
            statistics.setActive(transfers.count)
            curl_multi_remove_handle(multi, transfer.handle)
            left(transfer, multi: multi)
            transfer.fail(failure)
        }
        failExpiredWaiting(now: now)
    }

    private func collectFinished(multi: UnsafeMutableRawPointer) {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let result = message.pointee.data.result
            var privateData: UnsafeMutableRawPointer? = nil
            _ = curlew_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &privateData)
            let id = UInt64(UInt(bitPattern: privateData))
            curl_multi_remove_handle(multi, easy)
            guard let transfer = transfers.removeValue(forKey: id) else { continue }
            statistics.setActive(transfers.count)
            upkeep?.transferEnded()
            noteMultiplexing(transfer, multi: multi)
            left(transfer, multi: multi)
            if result != CURLE_OK, let delay = transfer.connectRetryDelay(for: result, policy: connectRetry) {
                statistics.connectRetried()
                retrying.append((EngineClock.now() &+ delay, id, transfer))
                continue
            }
            transfer.complete(result)
        }
    }

    // MARK: Errors

    package static func cancellationError(_ request: PreparedRequest) -> CurlewError {
        CurlewError(code: .cancelled, message: "the request was cancelled", request: request.summary, underlying: CancellationError())
    }

    package static func drainError(_ request: PreparedRequest, message: String) -> CurlewError {
        CurlewError(code: .shutdown, message: message, request: request.summary)
    }

    package static func shutdownError(_ request: PreparedRequest) -> CurlewError {
        CurlewError(code: .shutdown, message: "the transport was shut down", request: request.summary)
    }
}
