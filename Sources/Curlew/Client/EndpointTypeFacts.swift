internal import Synchronization

/// What a client works out once per endpoint type, the first time it sends one: the type's name
/// as `String(describing:)` prints it (every call needs it for its events, logs and errors, and
/// printing a metatype goes through `Mirror` and several dynamic casts), and whether the type
/// declares properties Curlew no longer reads (``RemovedEndpointProperties``).
struct EndpointTypeFacts: Sendable {
    /// `String(describing: R.self)`.
    let name: String
    /// What the type declares that Curlew ignores, or `nil`.
    let problem: String?

    /// Facts by type; guarded by the mutex. One entry per endpoint type the process sends.
    private static let known = Mutex<[ObjectIdentifier: EndpointTypeFacts]>([:])

    /// The facts of `request`'s type, from the cache after the first call. A release build logs
    /// a problem once, when the type is first seen; a debug build fails every call with it
    /// (``check()``).
    static func of<R: Endpoint>(_ request: R) -> EndpointTypeFacts {
        let key = ObjectIdentifier(R.self)
        if let facts = known.withLock({ $0[key] }) { return facts }
        let facts = EndpointTypeFacts(name: String(describing: R.self), problem: RemovedEndpointProperties.problem(in: request))
        let first = known.withLock { known in
            guard known[key] == nil else { return false }
            known[key] = facts
            return true
        }
        #if !DEBUG
            if first, let problem = facts.problem { RemovedEndpointProperties.report(problem) }
        #else
            _ = first
        #endif
        return facts
    }

    /// Fails the call in a debug build when the type declares what Curlew ignores.
    /// - Throws: ``/CurlewCore/CurlewError/Code/removedEndpointProperty`` (stage ``/CurlewCore/CurlewError/Stage/configuration``).
    func check() throws(CurlewError) {
        #if DEBUG
            guard let problem else { return }
            var error = CurlewError(code: .removedEndpointProperty, message: problem)
            error.stage = .configuration
            throw error
        #endif
    }
}
