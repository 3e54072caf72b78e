/// The life of one transfer as a value: configured on the caller's thread, attached to the multi
/// handle, head complete, body streaming (possibly paused by a slow reader or a slow request-body
/// producer), then finished or failed.
///
/// ``CurlEasyTransfer`` owns one and asks it what to do at each libcurl callback and engine
/// command; every mutating method is a pure transition that returns the action to perform, so the
/// rules (when the caller is resumed, whether a failure reaches the caller or the stream, which
/// direction to un-pause) are unit-tested without I/O. Engine thread only once attached.
struct TransferStateMachine {
    /// Where the phases can be.
    enum Phase: Equatable {
        /// Options set; not yet attached to the multi handle.
        case configured
        /// Attached; the final response head is not complete yet (connecting, sending,
        /// redirects, 1xx responses).
        case attached
        /// The final head is complete and body bytes go to a collecting or file sink; the caller
        /// is resumed at the end.
        case receiving
        /// The caller has the head and reads the body as a stream.
        case streaming
        /// Streaming, but libcurl's receive side is paused (`CURL_WRITEFUNC_PAUSE`) because the
        /// reader is behind.
        case paused
        /// Completed; the caller (or the stream) has the outcome.
        case finished
        /// Failed or cancelled; the caller (or the stream) has the error.
        case failed
    }

    /// Whether the caller is resumed as soon as the head is complete (stream disposition) rather
    /// than when the whole body has arrived.
    let resumesAtHead: Bool
    /// The current phase.
    private(set) var phase: Phase = .configured
    /// Whether libcurl's send side is paused (`CURL_READFUNC_PAUSE`) waiting for request-body
    /// chunks.
    private(set) var sendPaused = false
    /// How many times the receive side was paused (statistics and tests).
    private(set) var receivePauses = 0

    /// Creates the machine for a transfer that resumes its caller at the head (`true`, streams)
    /// or at the end (`false`, collect and file).
    init(resumesAtHead: Bool) {
        self.resumesAtHead = resumesAtHead
    }

    /// Whether the transfer has ended (finished or failed).
    var isTerminal: Bool { phase == .finished || phase == .failed }

    /// Whether the caller is still waiting for the response (its continuation not yet resumed).
    var callerWaiting: Bool {
        switch phase {
        case .configured, .attached, .receiving: true
        case .streaming, .paused, .finished, .failed: false
        }
    }

    /// Whether either direction is paused by Curlew (the network is not idle, a consumer or
    /// producer is): idle detection skips such transfers.
    var isPaused: Bool { phase == .paused || sendPaused }

    // MARK: Transitions

    /// The engine attached the handle. Returns `false` when the transfer was already over.
    mutating func attach() -> Bool {
        guard phase == .configured else { return false }
        phase = .attached
        return true
    }

    /// What to do when the final head turns out to be complete.
    enum HeadAction: Equatable {
        /// Nothing new: the head was complete already.
        case none
        /// The head just completed: report it, and resume the caller with it now when
        /// `resumeCaller` (streams).
        case headComplete(resumeCaller: Bool)
    }

    /// The write callback got body bytes (the first body byte marks the final head complete).
    mutating func bodyArrived() -> HeadAction {
        guard phase == .attached else { return .none }
        phase = resumesAtHead ? .streaming : .receiving
        return .headComplete(resumeCaller: resumesAtHead)
    }

    /// The body sink refused a chunk (`CURL_WRITEFUNC_PAUSE`). Returns whether the receive
    /// side just became paused.
    mutating func receivePaused() -> Bool {
        guard phase == .streaming else { return false }
        phase = .paused
        receivePauses += 1
        return true
    }

    /// The read callback had no request-body bytes yet (`CURL_READFUNC_PAUSE`).
    mutating func sendPausedForData() {
        guard !isTerminal else { return }
        sendPaused = true
    }

    /// The pause state libcurl must be given (`curl_easy_pause`): which directions stay paused.
    struct PauseState: Equatable {
        /// Keep the receive side paused.
        var receive: Bool
        /// Keep the send side paused.
        var send: Bool
    }

    /// An `.unpause` command arrived. Un-pauses each paused direction whose side is ready;
    /// returns the new pause state to hand to libcurl, or `nil` when nothing changes.
    mutating func resume(receiveReady: Bool, sendReady: Bool) -> PauseState? {
        guard !isTerminal else { return nil }
        var changed = false
        if phase == .paused, receiveReady {
            phase = .streaming
            changed = true
        }
        if sendPaused, sendReady {
            sendPaused = false
            changed = true
        }
        guard changed else { return nil }
        return PauseState(receive: phase == .paused, send: sendPaused)
    }

    /// What to do when libcurl reports the transfer done without error.
    enum CompletionAction: Equatable {
        /// Already over (cancelled, failed): nothing.
        case none
        /// Resume the caller with the whole response; `reportHead` when the head was not
        /// reported yet (a response without body bytes). A stream disposition gets an
        /// already-ended stream.
        case resumeCaller(reportHead: Bool)
        /// The caller has the stream: end it.
        case endStream
    }

    /// The transfer completed successfully.
    mutating func complete() -> CompletionAction {
        let action: CompletionAction
        switch phase {
        case .configured, .attached: action = .resumeCaller(reportHead: true)
        case .receiving: action = .resumeCaller(reportHead: false)
        case .streaming, .paused: action = .endStream
        case .finished, .failed: return .none
        }
        phase = .finished
        sendPaused = false
        return action
    }

    /// What to do when the transfer fails (libcurl error, idle timeout, cancellation, shutdown).
    enum FailureAction: Equatable {
        /// Already over: nothing.
        case none
        /// The caller still waits: resume it with the error (and discard any partial body).
        case failCaller
        /// The caller has the stream: end it with the error.
        case failStream
    }

    /// The transfer failed.
    mutating func fail() -> FailureAction {
        let action: FailureAction
        switch phase {
        case .configured, .attached, .receiving: action = .failCaller
        case .streaming, .paused: action = .failStream
        case .finished, .failed: return .none
        }
        phase = .failed
        sendPaused = false
        return action
    }
}
