internal import Synchronization

/// The current credential and its version, with single-flight refresh.
///
/// Every change bumps ``version``. A request remembers the version it was sent with; when it
/// comes back unauthorized, ``refreshed(after:using:)`` either returns a newer credential that
/// another request already obtained (a late 401 for an old token), joins the refresh in flight,
/// or starts one. A failed refresh gives every waiter the same error and leaves the store ready
/// for a new attempt.
///
/// Give it a ``CredentialStorage`` to persist the credential (a keychain, a file — the storage is
/// the app's): the store restores from it when created and saves every change — login,
/// refresh, logout, session end.
public actor TokenStore {
    /// An access token and, optionally, what refreshes it.
    public struct Credential: Sendable, Hashable {
        /// Sent in the authorization header.
        public var accessToken: String
        /// Handed to the refresher.
        public var refreshToken: String?

        /// Creates a credential.
        public init(accessToken: String, refreshToken: String? = nil) {
            self.accessToken = accessToken
            self.refreshToken = refreshToken
        }
    }

    /// Obtains a new credential from the current one. Send its request straight through a
    /// ``Transport`` you capture (`transport.send(request)`), outside the middleware chain, so the
    /// refresh is neither authorised with the stale token nor refreshed recursively.
    typealias Refresher = @Sendable (Credential) async throws -> Credential

    private var credential: Credential?
    /// Bumped on every change of credential.
    public private(set) var version = 0
    /// The credential and version as of the last change, readable without hopping onto the actor
    /// (the authorization middleware reads it on every request; the hop cost more than the rest
    /// of that middleware). Written by the actor at the end of every change (``publish()``), so
    /// the pair is always one the actor held; the mutex guards it.
    private let published: Mutex<(Credential, Int)?>
    private var refreshInFlight: (from: Int, task: Task<(Credential, Int), any Error>)?
    /// How many refreshes have completed successfully.
    public private(set) var refreshCount = 0

    private let storage: (any CredentialStorage)?

    /// Creates a store, optionally logged in.
    public init(credential: Credential? = nil) {
        self.credential = credential
        self.storage = nil
        self.published = Mutex(credential.map { ($0, 0) })
    }

    /// Creates a store that restores its credential from `storage` and saves every change to it.
    public init(storage: any CredentialStorage) {
        let loaded = storage.loadCredential()
        self.credential = loaded
        self.storage = storage
        self.published = Mutex(loaded.map { ($0, 0) })
    }

    /// The credential and its version, or `nil` when logged out.
    public func current() -> (Credential, Int)? {
        credential.map { ($0, version) }
    }

    private func publish() {
        let current = credential.map { ($0, version) }
        published.withLock { $0 = current }
    }

    /// The credential and its version as of the store's last change, read without waiting for
    /// the actor: what ``current()`` returns once every change already made has been applied.
    public nonisolated var snapshot: (Credential, Int)? {
        published.withLock { $0 }
    }

    /// Stores a new credential (after a login).
    public func update(_ credential: Credential) {
        self.credential = credential
        version += 1
        publish()
        storage?.saveCredential(credential)
    }

    /// Forgets the credential (logout, session ended).
    public func clear() {
        credential = nil
        version += 1
        publish()
        refreshInFlight = nil
        storage?.saveCredential(nil)
    }

    /// Forgets the credential if it is still the one of `version` (a session ended by a failed
    /// refresh ends once, however many requests saw the failure). Returns whether it did.
    func endSession(ifStill version: Int) -> Bool {
        guard self.version == version, credential != nil else { return false }
        clear()
        return true
    }

    /// A credential newer than `failedVersion`: the current one if it already is, else the result
    /// of the refresh in flight, else of a new refresh. A caller under a deadline
    /// (``withDeadline(in:isolation:operation:)``) stops waiting when it passes, with
    /// `.deadlineExceeded`; the refresh carries on for the others.
    /// - Throws: `.notLoggedIn` without a credential, or when it was cleared (``clear()``) while
    ///   the refresh ran; otherwise what the refresher threw.
    public func refreshed(after failedVersion: Int, using refresher: @escaping @Sendable (Credential) async throws -> Credential) async throws -> (Credential, Int) {
        let (credential, version, _) = try await refresh(after: failedVersion, using: refresher)
        return (credential, version)
    }

    /// Same as ``refreshed(after:using:)``, also telling whether this caller started the refresh
    /// (so exactly one caller reports it).
    func refresh(after failedVersion: Int, using refresher: @escaping Refresher) async throws -> (Credential, Int, started: Bool) {
        if version > failedVersion, let credential { return (credential, version, false) }
        if let flight = refreshInFlight, flight.from == version {
            let (credential, version) = try await CancellableWait.value(of: flight.task, deadline: CallDeadline.current)
            return (credential, version, false)
        }
        guard let current = credential else {
            throw CurlewError(code: .notLoggedIn, message: "there is no credential to refresh")
        }
        let from = version
        // The refresh serves every caller that joins it, so it does not inherit the deadline of
        // the call that happened to start it (a Curlew call made by the refresher would be cut
        // at that deadline); each caller's own wait still ends at its own.
        let task = Task<(Credential, Int), any Error> {
            try await CallDeadline.$current.withValue(nil) {
                do {
                    let fresh = try await refresher(current)
                    guard let installed = self.install(fresh, from: from) else {
                        throw CurlewError(code: .notLoggedIn, message: "the credential was cleared (a logout) while it was being refreshed")
                    }
                    return installed
                } catch {
                    self.abandonRefresh(from: from)
                    throw error
                }
            }
        }
        refreshInFlight = (from, task)
        let (fresh, newVersion) = try await CancellableWait.value(of: task, deadline: CallDeadline.current)
        return (fresh, newVersion, true)
    }

    /// Stores the refreshed credential, or returns what replaced the old one meanwhile: a login's
    /// credential, or `nil` after a logout (the refreshed token must not outlive the session).
    private func install(_ fresh: Credential, from: Int) -> (Credential, Int)? {
        if refreshInFlight?.from == from { refreshInFlight = nil }
        // A logout or login while refreshing wins over the refreshed token.
        guard version == from else { return credential.map { ($0, version) } }
        credential = fresh
        version += 1
        publish()
        refreshCount += 1
        storage?.saveCredential(fresh)
        return (fresh, version)
    }

    private func abandonRefresh(from: Int) {
        if refreshInFlight?.from == from { refreshInFlight = nil }
    }
}
