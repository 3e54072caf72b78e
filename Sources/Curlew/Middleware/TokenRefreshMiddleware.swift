/// Refreshes the credential when the server says it expired, then resends — at most three
/// attempts in all.
///
/// Triggered by the configured HTTP statuses (401 by default) and business codes (e.g. `"801"`,
/// checked by the endpoint's ``Endpoint/envelope`` inside the chain). All concurrent requests that
/// fail with the same credential version share one refresh; a request that failed with an older
/// version simply resends with the current credential. Session-ended codes (e.g. `"802"`) or
/// statuses clear the credential the request was sent with and publish
/// ``ClientEvent/Kind/sessionEnded`` once; a late answer for an older credential fails its call
/// with `.sessionEnded` but leaves a newer login alone. Answers from origins the client does not
/// trust (which never receive the credential) neither refresh nor end the session.
///
/// It runs outside ``AuthorizationMiddleware`` (so every attempt gets a fresh header) wherever it
/// is registered: the client places it by phase (``MiddlewarePhase/tokenRefresh``).
///
/// A refresh that fails fails the request with `.refreshFailed`, the credential kept; with
/// ``endsSessionWhenRefreshFails`` a refresh that was answered without a new credential ends the
/// session instead (no new token → log off): the credential is cleared,
/// ``ClientEvent/Kind/sessionEnded`` is published once and the request fails with
/// `.sessionEnded`. A refresh that never reached its server (a transport failure: cannot connect,
/// timeout, reset) keeps the session either way. A logout (``TokenStore/clear()``) while a call
/// waits for its refresh fails that call with `.notLoggedIn`: it is not resent with the refreshed
/// token, which the store discards.
public struct TokenRefreshMiddleware: APIMiddleware {
    /// The credential store, shared with ``AuthorizationMiddleware``.
    public let store: TokenStore
    /// Obtains a new credential; send its request with the transport you capture, not the client.
    public let refresher: @Sendable (TokenStore.Credential) async throws -> TokenStore.Credential
    /// HTTP statuses that mean "refresh and retry". Default: 401.
    public var refreshStatuses: Set<Int>
    /// Business codes that mean "refresh and retry", e.g. `["801"]`.
    public var refreshCodes: Set<String>
    /// Business codes that end the session, e.g. `["802"]`.
    public var sessionEndedCodes: Set<String>
    /// HTTP statuses that end the session (a forced logout, e.g. 403 or 419). A redirect status
    /// with a `Location` (a `307` to a login page) is followed before this middleware sees it, so
    /// it ends nothing: where such a redirect means "logged out", set
    /// ``/CurlewCore/TransferOptions/redirectLimit`` to 0, or list only statuses that are not
    /// followed.
    public var sessionEndedStatuses: Set<Int>
    /// Attempts per request, the first send included: `3` (the default) is the send and at most
    /// two resends; "resend at most three times" is `4`; `1` sends once and never refreshes. Less
    /// than 1 is refused: every call through the middleware fails with
    /// ``/CurlewCore/CurlewError/Code/invalidConnectionSettings`` (stage `configuration`) before
    /// anything is sent.
    public var maximumAttempts: Int
    /// What a failed refresh does to the session. `false` (the default): fail the request with
    /// `.refreshFailed` and keep the credential (a later request may try again). `true`: when the
    /// refresh was answered but gave no credential, clear the credential, publish
    /// ``ClientEvent/Kind/sessionEnded`` and fail with `.sessionEnded`; a refresh that failed in
    /// transport (a ``/CurlewCore/CurlewError`` of level ``/CurlewCore/CurlewError/Level/transport``) still fails with
    /// `.refreshFailed` and keeps the session (cancellation surfaces as `CancellationError`).
    public var endsSessionWhenRefreshFails: Bool

    /// Creates the middleware.
    public init(
        store: TokenStore,
        refreshStatuses: Set<Int> = [401],
        refreshCodes: Set<String> = [],
        sessionEndedCodes: Set<String> = [],
        sessionEndedStatuses: Set<Int> = [],
        maximumAttempts: Int = 3,
        endsSessionWhenRefreshFails: Bool = false,
        refresher: @escaping @Sendable (TokenStore.Credential) async throws -> TokenStore.Credential
    ) {
        self.store = store
        self.refresher = refresher
        self.refreshStatuses = refreshStatuses
        self.refreshCodes = refreshCodes
        self.sessionEndedCodes = sessionEndedCodes
        self.sessionEndedStatuses = sessionEndedStatuses
        self.maximumAttempts = maximumAttempts
        self.endsSessionWhenRefreshFails = endsSessionWhenRefreshFails
    }

    /// `.tokenRefresh`.
    public var kind: MiddlewareKind { .tokenRefresh }

    /// ``MiddlewarePhase/tokenRefresh``.
    public var phase: MiddlewarePhase? { .tokenRefresh }

    /// ``refreshStatuses`` and ``sessionEndedStatuses`` as
    /// ``MiddlewareCapabilities/handledStatuses``.
    public var capabilities: MiddlewareCapabilities {
        MiddlewareCapabilities(handledStatuses: refreshStatuses.union(sessionEndedStatuses))
    }

    /// Sends, refreshing and resending while the server answers "expired".
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard maximumAttempts >= 1 else {
            throw CurlewError.refusedSetting(
                "TokenRefreshMiddleware.maximumAttempts", "at least 1 (1 sends once, without a refresh)", "\(maximumAttempts)", request: request.summary)
        }
        // A server that is not trusted never received the credential: its 401 or "session
        // ended" says nothing about it, and reaches the caller as it is.
        guard context.trusts(request.url) else { return try await next(request, context) }
        var context = context
        var snapshot = store.snapshot
        // This middleware's own sends, for ``maximumAttempts``; `context.attempt` numbers every
        // transport attempt of the call, a retry's inside included.
        var sends = 1
        while true {
            if let (credential, version) = snapshot {
                context.credential = (credential, version)
                context.credentialStore = ObjectIdentifier(store)
            }
            do {
                return try await next(request, context)
            } catch let error as CurlewError {
                // The answer came from the hop that gave it: after a redirect to an origin the
                // client does not trust (which got no credential), its 401 or "session ended"
                // says nothing about the credential either.
                if let answered = error.request?.sentURL, answered != request.url, !context.trusts(answered) { throw error }
                if let reason = sessionEndReason(error) {
                    // The session the request was sent in ends, once: not a newer login's (a late
                    // answer for an old token), and not again for every call that saw it end.
                    if let (_, version) = snapshot, await store.endSession(ifStill: version) {
                        context.events.report(.sessionEnded) { $0.reason = reason }
                    }
                    var ended = CurlewError(code: .sessionEnded, message: "the server ended the session (\(reason))", request: request.summary, underlying: error)
                    ended.status = error.status
                    ended.businessCode = error.businessCode
                    throw ended
                }
                guard needsRefresh(error), let (_, version) = snapshot else { throw error }
                // A one-shot body cannot be sent again: the caller gets the failure as it is.
                guard request.content?.isReplayable ?? true else { throw error }
                guard sends < maximumAttempts else {
                    var exhausted = CurlewError(
                        code: .unauthorized, message: "still unauthorized after \(sends) attempts",
                        request: request.summary, underlying: error)
                    exhausted.status = error.status
                    exhausted.headers = error.headers
                    exhausted.bodySnippet = error.bodySnippet
                    exhausted.businessCode = error.businessCode
                    throw exhausted
                }
                do {
                    // Counted and traced once per refresh when instrumentation is on (CallObservation).
                    let (fresh, newVersion, started) = try await store.refresh(after: version, using: CallObservation.observingRefresh(refresher))
                    snapshot = (fresh, newVersion)
                    if started { context.events.report(.credentialRefreshed) { $0.credentialVersion = newVersion } }
                } catch let failure {
                    if failure is CancellationError || (failure as? CurlewError)?.code == .cancelled { throw CancellationError() }
                    if (failure as? CurlewError)?.code == .notLoggedIn {
                        // Logged out while this call waited: it is not resent, with any token.
                        var loggedOut = CurlewError(
                            code: .notLoggedIn, message: "logged out while the call waited for a token refresh", request: request.summary, underlying: error)
                        loggedOut.status = error.status
                        throw loggedOut
                    }
                    if var expired = failure as? CurlewError, expired.code == .deadlineExceeded, expired.stage == .deadline {
                        // This call's deadline ended its wait; the refresh itself goes on.
                        expired.request = request.summary
                        throw expired
                    }
                    let failed = CurlewError(code: .refreshFailed, message: "the token refresh failed: \(CurlewError.wrapping(failure).message)", request: request.summary, underlying: failure)
                    // Only a refresh that was answered ends the session: an unreachable token
                    // server (a transport failure) says nothing about the credential.
                    guard endsSessionWhenRefreshFails, CurlewError.wrapping(failure).code.level != .transport else { throw failed }
                    if await store.endSession(ifStill: version) {
                        context.events.report(.sessionEnded) { $0.reason = "refresh failed" }
                    }
                    throw CurlewError(code: .sessionEnded, message: "the session ended: the token refresh failed", request: request.summary, underlying: failed)
                }
                sends += 1
                context.attempt = max(context.attempt, error.attempt ?? 0) + 1
            }
        }
    }

    private func needsRefresh(_ error: CurlewError) -> Bool {
        if let status = error.status, error.code == .unacceptableStatus, refreshStatuses.contains(status.code) { return true }
        if let code = error.businessCode, refreshCodes.contains(code) { return true }
        return false
    }

    private func sessionEndReason(_ error: CurlewError) -> String? {
        if let code = error.businessCode, sessionEndedCodes.contains(code) { return "business code \(code)" }
        if let status = error.status, error.code == .unacceptableStatus, sessionEndedStatuses.contains(status.code) { return "HTTP \(status.code)" }
        return nil
    }
}
