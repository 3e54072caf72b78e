/// The life of one transfer as a value that owns what it guards: the caller waiting for the
/// response, the body sink and source, and the reason a callback aborted the transfer.
///
/// ``CurlEasyTransfer`` feeds it every libcurl callback and engine command as an event; each
/// event returns an action, and the class around the machine only performs actions. The caller
/// (a continuation in production, any value in tests) leaves the machine inside the one action
/// that resumes it, and no state after that holds it, so a caller is resumed exactly once, or
/// never only when the transfer is dropped before it ends: by construction, not by convention.
///
/// ```
/// configured ─attach─► awaitingHead ─headComplete─► receiving ──────────┐
///      │                    │   │                   (collect, file)       │
///      │                    │   └─headComplete(hop)─► skippingHop ───────┤ transferEnded
///      │                    └─headComplete(stream)──► streaming ─────────┤ or fail
///      └──────────────── fail ─────────────────────────────────────────── ► ended
/// ```
///
/// Engine thread only once attached; tested event by event without I/O.
package struct TransferStateMachine<Caller> {
    /// What a transfer in flight holds besides its caller.
    package struct Parties {
        /// Where the response body goes.
        package let sink: any ResponseBodySink
        /// Where a request body read while sending comes from; `nil` for none or bytes.
        package let source: RequestBodySource?
        /// Why a callback aborted the transfer; the first reason wins, and it is what the caller
        /// gets instead of libcurl's own error for the abort. Boxed: an error is a large value,
        /// and the parties move from state to state with every event.
        package var abortReason: AbortReason?
        /// Whether libcurl's send side is paused (`CURL_READFUNC_PAUSE`) waiting for request-body
        /// chunks.
        package var sendPaused = false
        /// Body bytes of a redirect hop dropped unread so far.
        package var discardedHopBytes = 0
    }

    /// The reason a callback aborted a transfer.
    package final class AbortReason: Sendable {
        package let error: CurlewError
        init(_ error: CurlewError) { self.error = error }
    }

    /// Where a transfer can be.
    package enum State {
        /// Options set; not yet attached to the multi handle.
        case configured(Parties, caller: Caller)
        /// Attached; the final head is not complete yet (connecting, sending, 1xx responses).
        case awaitingHead(Parties, caller: Caller)
        /// The final head is complete; body bytes go to a collecting or file sink, and the
        /// caller is resumed at the end.
        case receiving(Parties, caller: Caller)
        /// The head is a redirect the client follows: its body is dropped unread (never decoded,
        /// never counted against the size limit), and the caller gets the head at the end.
        case skippingHop(Parties, caller: Caller)
        /// The caller has the head and reads the body as a stream; `receivePaused` while the
        /// reader is behind (`CURL_WRITEFUNC_PAUSE`).
        case streaming(Parties, receivePaused: Bool)
        /// Finished or failed: the caller, or the stream, has the outcome.
        case ended
    }

    /// The current state.
    package private(set) var state: State
    /// Whether the caller is resumed as soon as the head is complete (a streaming sink).
    package let resumesAtHead: Bool
    /// How many times the receive side was paused (statistics and tests).
    package private(set) var receivePauses = 0

    /// The most body bytes of a redirect hop read and dropped; a longer body stops the hop's
    /// transfer (its connection closes) rather than reading on.
    package static var hopBodyLimit: Int { 1 << 20 }

    /// A configured transfer whose `caller` waits; `resumesAtHead` for streaming sinks.
    package init(caller: Caller, sink: any ResponseBodySink, source: RequestBodySource?, resumesAtHead: Bool) {
        self.state = .configured(Parties(sink: sink, source: source), caller: caller)
        self.resumesAtHead = resumesAtHead
    }

    // MARK: Queries

    /// Whether the transfer has ended.
    /// Whether the transfer may be attached again from the start: attached, nothing received,
    /// nothing aborted (a connection attempt that failed).
    package var canRestart: Bool {
        if case .awaitingHead(let parties, _) = state { return parties.abortReason == nil }
        return false
    }

    package var isEnded: Bool {
        if case .ended = state { true } else { false }
    }

    /// Whether either direction is paused by Curlew (a consumer or a producer is behind, not the
    /// network): idle detection skips such transfers.
    package var isPaused: Bool {
        switch state {
        case .streaming(let parties, let receivePaused): receivePaused || parties.sendPaused
        case .configured(let parties, _), .awaitingHead(let parties, _), .receiving(let parties, _), .skippingHop(let parties, _):
            parties.sendPaused
        case .ended: false
        }
    }

    /// The request-body source while the transfer is in flight (libcurl's read and seek
    /// callbacks).
    package var source: RequestBodySource? {
        switch state {
        case .configured(let parties, _), .awaitingHead(let parties, _), .receiving(let parties, _), .skippingHop(let parties, _),
            .streaming(let parties, _):
            parties.source
        case .ended: nil
        }
    }

    // MARK: Events

    /// The engine attached the handle. Returns `false` when the transfer already ended.
    package mutating func attach() -> Bool {
        guard case .configured(let parties, let caller) = state else { return false }
        state = .awaitingHead(parties, caller: caller)
        return true
    }

    /// What to do when the final head turns out complete (the first body byte arrived).
    package enum HeadAction {
        /// The head was complete already, or the transfer ended.
        case none
        /// Tell `sink` the head (length, status) and report it; the caller waits for the end.
        case deliverHead(any ResponseBodySink)
        /// Tell `sink` the head, report it, and resume the caller now with the stream.
        case resumeCallerWithStream(Caller, any ResponseBodySink)
        /// A redirect the client follows: nothing is delivered or reported.
        case skipHop
    }

    /// The first body byte arrived: the final head is complete. `isFollowedRedirect` when the
    /// head is a redirect that the client follows.
    package mutating func headComplete(isFollowedRedirect: Bool) -> HeadAction {
        guard case .awaitingHead(let parties, let caller) = state else { return .none }
        if isFollowedRedirect {
            state = .skippingHop(parties, caller: caller)
            return .skipHop
        }
        if resumesAtHead {
            state = .streaming(parties, receivePaused: false)
            return .resumeCallerWithStream(caller, parties.sink)
        }
        state = .receiving(parties, caller: caller)
        return .deliverHead(parties.sink)
    }

    /// What to do with a chunk of body bytes.
    package enum ChunkAction {
        /// Hand the bytes to the sink (through the content decoder when there is one).
        case deliver(any ResponseBodySink)
        /// A followed redirect's body: take the bytes and drop them.
        case discard
        /// Stop the transfer (a hop's body beyond ``hopBodyLimit``, or bytes after the end).
        case stop
    }

    /// `count` body bytes arrived (after ``headComplete(isFollowedRedirect:)``).
    package mutating func bodyChunk(count: Int) -> ChunkAction {
        switch state {
        case .receiving(let parties, _), .streaming(let parties, _):
            return .deliver(parties.sink)
        case .skippingHop(var parties, let caller):
            parties.discardedHopBytes += count
            let withinLimit = parties.discardedHopBytes <= Self.hopBodyLimit
            state = .skippingHop(parties, caller: caller)
            return withinLimit ? .discard : .stop
        case .configured, .awaitingHead, .ended:
            return .stop
        }
    }

    /// The sink refused a chunk for now (`CURL_WRITEFUNC_PAUSE`). Returns whether the receive
    /// side just became paused; only a streaming transfer pauses.
    package mutating func receivePaused() -> Bool {
        guard case .streaming(let parties, receivePaused: false) = state else { return false }
        state = .streaming(parties, receivePaused: true)
        receivePauses += 1
        return true
    }

    /// The read callback had no request-body bytes yet (`CURL_READFUNC_PAUSE`).
    package mutating func sendPausedForData() {
        update { $0.sendPaused = true }
    }

    /// A callback aborts the transfer for `reason` (it returns libcurl's abort code next); the
    /// first reason is the one the caller gets.
    package mutating func abort(_ reason: CurlewError) {
        update { parties in
            if parties.abortReason == nil { parties.abortReason = AbortReason(reason) }
        }
    }

    /// The pause state libcurl must be given (`curl_easy_pause`): which directions stay paused.
    package struct PauseState: Equatable {
        /// Keep the receive side paused.
        package var receive: Bool
        /// Keep the send side paused.
        package var send: Bool
    }

    /// An `.unpause` command arrived: each paused direction whose party can go on again is
    /// un-paused. Returns the new pause state for libcurl and whether the receive side was
    /// un-paused, or `nil` when nothing changes.
    package mutating func unpause() -> (PauseState, resumedReceive: Bool)? {
        switch state {
        case .streaming(var parties, var receivePaused):
            let resumedReceive = receivePaused && parties.sink.acceptsMore
            let resumedSend = parties.sendPaused && (parties.source?.isReadable ?? true)
            guard resumedReceive || resumedSend else { return nil }
            if resumedReceive { receivePaused = false }
            if resumedSend { parties.sendPaused = false }
            state = .streaming(parties, receivePaused: receivePaused)
            return (PauseState(receive: receivePaused, send: parties.sendPaused), resumedReceive)
        case .configured(var parties, let caller), .awaitingHead(var parties, let caller), .receiving(var parties, let caller),
            .skippingHop(var parties, let caller):
            guard parties.sendPaused, parties.source?.isReadable ?? true else { return nil }
            parties.sendPaused = false
            state = Self.replacingParties(of: state, with: parties, caller: caller)
            return (PauseState(receive: false, send: false), false)
        case .ended:
            return nil
        }
    }

    /// What to do when the transfer ends, however it ends.
    package enum EndAction {
        /// It had ended already (a cancel racing the completion): nothing.
        case none
        /// Resume the caller with the whole response. `reportHead` when the head was not reported
        /// yet (a response without body bytes). A streaming sink gets an already-ended stream; a
        /// skipped redirect hop gets an empty body.
        case succeed(Caller, Parties, reportHead: Bool)
        /// The caller has the stream: end it (with the final metrics).
        case endStream(Parties, wasPaused: Bool)
        /// Resume the caller with `error`; the sink discards what it has.
        case failCaller(Caller, Parties, CurlewError)
        /// The caller has the stream: end it with `error`.
        case failStream(Parties, CurlewError, wasPaused: Bool)
    }

    /// libcurl reports the transfer done; `error` is what its result code means (`nil` for
    /// success). A callback's abort reason takes precedence. A skipped redirect hop succeeds
    /// whatever happened to the body nobody reads.
    package mutating func transferEnded(error: CurlewError?) -> EndAction {
        let ending = state
        switch ending {
        case .configured(let parties, let caller), .awaitingHead(let parties, let caller):
            state = .ended
            if let failure = parties.abortReason?.error ?? error { return .failCaller(caller, parties, failure) }
            return .succeed(caller, parties, reportHead: true)
        case .receiving(let parties, let caller):
            state = .ended
            if let failure = parties.abortReason?.error ?? error { return .failCaller(caller, parties, failure) }
            return .succeed(caller, parties, reportHead: false)
        case .skippingHop(let parties, let caller):
            state = .ended
            if let failure = parties.abortReason?.error { return .failCaller(caller, parties, failure) }
            return .succeed(caller, parties, reportHead: false)
        case .streaming(let parties, let receivePaused):
            state = .ended
            if let failure = parties.abortReason?.error ?? error { return .failStream(parties, failure, wasPaused: receivePaused) }
            return .endStream(parties, wasPaused: receivePaused)
        case .ended:
            return .none
        }
    }

    /// The transfer fails with `error` from outside libcurl's result (cancelled, shut down, idle,
    /// refused before it was submitted).
    package mutating func fail(_ error: CurlewError) -> EndAction {
        let ending = state
        switch ending {
        case .configured(let parties, let caller), .awaitingHead(let parties, let caller), .receiving(let parties, let caller),
            .skippingHop(let parties, let caller):
            state = .ended
            return .failCaller(caller, parties, error)
        case .streaming(let parties, let receivePaused):
            state = .ended
            return .failStream(parties, error, wasPaused: receivePaused)
        case .ended:
            return .none
        }
    }

    // MARK: Helpers

    /// Changes the parties of a transfer in flight; nothing once it ended.
    private mutating func update(_ change: (inout Parties) -> Void) {
        switch state {
        case .configured(var parties, let caller), .awaitingHead(var parties, let caller), .receiving(var parties, let caller),
            .skippingHop(var parties, let caller):
            change(&parties)
            state = Self.replacingParties(of: state, with: parties, caller: caller)
        case .streaming(var parties, let receivePaused):
            change(&parties)
            state = .streaming(parties, receivePaused: receivePaused)
        case .ended:
            break
        }
    }

    /// `state` with its parties replaced (the states where the caller still waits).
    private static func replacingParties(of state: State, with parties: Parties, caller: Caller) -> State {
        switch state {
        case .configured: .configured(parties, caller: caller)
        case .awaitingHead: .awaitingHead(parties, caller: caller)
        case .receiving: .receiving(parties, caller: caller)
        case .skippingHop: .skippingHop(parties, caller: caller)
        case .streaming(_, let receivePaused): .streaming(parties, receivePaused: receivePaused)
        case .ended: .ended
        }
    }
}
