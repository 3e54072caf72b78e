internal import Synchronization
internal import HTTPTypes
internal import Logging

/// What one call is: the facts a ``MiddlewareContext`` and the ``TransportContext`` made from it
/// share. Both keep them in one ``CopyOnWriteBox`` (the idiom of every value the request path
/// copies), so handing a context from step to step costs one reference count, and a setter on an
/// unshared context writes in place.
///
/// Only stored properties: a computed property of a value kept in a class (the box's storage)
/// makes Swift copy the whole value to call it; a stored one is read in place.
struct CallFacts: Sendable {
    var requestID: CallID
    var requestName: String
    /// Where ``identity`` comes from: given, or computed from the prepared request when read
    /// (most calls never read it: it is the cache key and the fixture name).
    var identitySource: IdentitySource
    var events: EventReporter
    /// The endpoint whose ``Endpoint/accepts(_:)`` and envelope the innermost step checks the
    /// response against; `nil` in a context made outside a call (no check).
    var endpoint: (any Endpoint)?
    /// The end of the call, after its response is decoded, for a middleware that must know
    /// whether the caller got a value; `nil` unless a middleware needs it (``RequestHolds``).
    var outcome: CallOutcome?
    /// Where the redirect step writes the redirects it followed, for the cache above it; `nil`
    /// unless the cache asked (``RedirectLog``).
    var redirects: RedirectLog?

    enum IdentitySource: Sendable {
        case identity(RequestIdentity)
        /// The request before any middleware, with the name and volatile parameters.
        case request(PreparedRequest, name: String, volatileParameters: Set<String>)

        /// The request's identity before any middleware.
        var identity: RequestIdentity {
            switch self {
            case .identity(let identity): identity
            case .request(let request, let name, let volatileParameters):
                RequestIdentity(request, name: name, volatileParameters: volatileParameters)
            }
        }
    }
}

/// What a client gives every one of its calls: the transport, the trusted origins and the logger.
/// The client keeps one box of them and every call's ``MiddlewareContext`` shares it; a call whose
/// logger carries metadata of its own (or a middleware that swaps the transport) gets a copy.
struct CallEnvironment: Sendable {
    var transport: any Transport
    var trustedOrigins: TrustedOrigins
    var logger: Logger
    /// ``ClientConfiguration/deadlineHeader``.
    var deadlineHeader: HTTPField.Name? = nil
    /// The client's middleware in phase order, for work that runs the rest of a call's chain
    /// after the call has returned (``MiddlewareContext/chain(after:)``); empty in a context
    /// made outside a client.
    var middleware: [any APIMiddleware] = []
}

/// Tells a middleware how the whole call ended — after the chain returned and the response was
/// decoded (or stored, for a download) — when its own view, the chain's raw response, is not
/// enough: a `200` whose body does not decode fails the call. The ``APIClient`` makes one only for
/// a call that needs it and settles it once.
final class CallOutcome: Sendable {
    private let handler = Mutex<(@Sendable (Bool) -> Void)?>(nil)

    /// Runs `handler` with whether the call succeeded when it ends (replacing one set before).
    func onEnd(_ handler: @escaping @Sendable (Bool) -> Void) {
        self.handler.withLock { $0 = handler }
    }

    /// Forgets the handler: the middleware dealt with the outcome itself.
    func clear() {
        handler.withLock { $0 = nil }
    }

    /// The call ended; runs the handler once.
    func settle(succeeded: Bool) {
        handler.withLock { handler in
            defer { handler = nil }
            return handler
        }?(succeeded)
    }
}
