extension CurlewError {
    /// Where on the request path an error was born: preparing, waiting in a queue, a middleware
    /// (by kind), the transport, the status check, the envelope, the endpoint's hooks, decoding,
    /// or a chain step.
    ///
    /// ```swift
    /// catch let error as CurlewError where error.stage == .middleware(.signing) { … }
    /// ```
    public struct Stage: Hashable, Sendable, CustomStringConvertible {
        /// The stage's name, e.g. `"transport"` or `"middleware signing"`.
        public let name: String
        /// The chain step number, for ``chainStep(_:name:)``.
        public let step: Int?

        private init(_ name: String, step: Int? = nil) {
            self.name = name
            self.step = step
        }

        /// Turning the endpoint into a prepared request (URL, headers, body, `willSend`).
        public static let prepare = Stage("prepare")
        /// Checking the call against the client's configuration before sending.
        public static let configuration = Stage("configuration")
        /// The call's deadline (`withDeadline`) had passed before it, or an attempt, started; or a
        /// batch's `BatchOptions.deadline` passed before the member finished (`.totalTimeout`).
        public static let deadline = Stage("deadline")
        /// Waiting in a `QueueActor` queue.
        public static let queue = Stage("queue")
        /// The transport: connecting, sending, receiving.
        public static let transport = Stage("transport")
        /// `Endpoint.accepts(_:)` refused the status.
        public static let status = Stage("status")
        /// The `ResponseEnvelope` check: a business error or a body that is not the envelope.
        public static let envelope = Stage("envelope")
        /// `Endpoint.didReceive(_:)`.
        public static let didReceive = Stage("didReceive")
        /// `Endpoint.decode(_:decoder:)`, validation included.
        public static let decoding = Stage("decoding")

        /// A middleware of the given kind threw it.
        public static func middleware(_ kind: MiddlewareKind) -> Stage {
            Stage("middleware \(kind.name)")
        }

        /// Step `number` (from 1) of a `Chain`, named `name`.
        public static func chainStep(_ number: Int, name: String) -> Stage {
            Stage("chain step \(number) \(name)", step: number)
        }

        /// The name.
        public var description: String { name }
    }
}
