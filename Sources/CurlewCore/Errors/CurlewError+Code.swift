extension CurlewError {
    /// The precise reason for a failure. A struct wrapping a private enum, so new codes can be
    /// added without breaking callers' `switch` statements; compare with `==` or use ``level``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case cannotConnect, dnsFailure, tlsFailure, connectTimeout, totalTimeout, idleTimeout
            case connectionReset, emptyReply, tooManyRedirects, redirectRefused, bodyTooLarge
            case shutdown, transportFailure
            case unacceptableStatus
            case serverError
            case decodingFailed, validationFailed
            case unauthorized, notLoggedIn, sessionEnded, refreshFailed
            case cancelled
            case malformedURL, unsupportedScheme, invalidHeader, invalidMethod, invalidPath
            case encodingFailed
            case missingCredentialSource, middlewareFailed, operationFailed, fileUnreadable, fileNotWritable, bodyStreamFailed
            case fixtureNotFound, fixturePathRejected, fixtureInvalid, mockGenerationFailed
            case cacheMiss
            case destinationExists, unexpectedContentType, rangeMismatch, resourceChanged, downloadIncomplete
            case downloadInProgress
            case tlsCertificateUntrusted, tlsCertificateExpired, tlsHostnameMismatch, tlsPinMismatch
            case tlsClientCertificateInvalid, proxyFailure, invalidConnectionSettings
            case protocolError, connectionClosedBeforeResponse, insecureRedirect
            case cacheNotConfigured
            case cachePolicyConflict
            case removedEndpointProperty
            case deadlineExceeded, circuitOpen, headTimeout, concurrencyLimitExceeded
            case invalidQueueName
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The connection could not be established (refused, unreachable).
        public static let cannotConnect = Code(.cannotConnect)
        /// The host name could not be resolved.
        public static let dnsFailure = Code(.dnsFailure)
        /// TLS handshake or certificate verification failed.
        public static let tlsFailure = Code(.tlsFailure)
        /// The connection was not established within the connect timeout.
        public static let connectTimeout = Code(.connectTimeout)
        /// The whole exchange took longer than the total timeout.
        public static let totalTimeout = Code(.totalTimeout)
        /// The response head did not begin within the head timeout after the request was sent
        /// (``TransferOptions/headTimeout``: the server's time to first byte).
        public static let headTimeout = Code(.headTimeout)
        /// No bytes moved for longer than the idle timeout.
        public static let idleTimeout = Code(.idleTimeout)
        /// The peer reset or closed the connection mid-exchange.
        public static let connectionReset = Code(.connectionReset)
        /// The server closed the connection without sending a response.
        public static let emptyReply = Code(.emptyReply)
        /// More redirects than the configured limit.
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// A redirect pointed at a scheme other than http or https.
        public static let redirectRefused = Code(.redirectRefused)
        /// The response body exceeded the configured maximum (decoded bytes).
        public static let bodyTooLarge = Code(.bodyTooLarge)
        /// The transport was shut down before the exchange completed.
        public static let shutdown = Code(.shutdown)
        /// Any other transport failure; the message carries libcurl's explanation.
        public static let transportFailure = Code(.transportFailure)
        /// The response status is outside the request's acceptable statuses.
        public static let unacceptableStatus = Code(.unacceptableStatus)
        /// The server's envelope carried a business error code.
        public static let serverError = Code(.serverError)
        /// The body could not be decoded into the expected type.
        public static let decodingFailed = Code(.decodingFailed)
        /// The body decoded, but a `ValidatableModel` value rejected itself.
        public static let validationFailed = Code(.validationFailed)
        /// Authentication is missing or was refused.
        public static let unauthorized = Code(.unauthorized)
        /// The request requires login and there is no credential; nothing was sent.
        public static let notLoggedIn = Code(.notLoggedIn)
        /// The server ended the session; the credential was cleared.
        public static let sessionEnded = Code(.sessionEnded)
        /// Refreshing the credential failed; every request waiting on that refresh gets this.
        public static let refreshFailed = Code(.refreshFailed)
        /// The calling task was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The URL could not be formed from the base URL and path.
        public static let malformedURL = Code(.malformedURL)
        /// The URL's scheme is not http or https.
        public static let unsupportedScheme = Code(.unsupportedScheme)
        /// A header name or value contains CR, LF, NUL or is not a valid token.
        public static let invalidHeader = Code(.invalidHeader)
        /// The method is not a valid HTTP token.
        public static let invalidMethod = Code(.invalidMethod)
        /// The path contains CR, LF or NUL.
        public static let invalidPath = Code(.invalidPath)
        /// The request body could not be encoded.
        public static let encodingFailed = Code(.encodingFailed)
        /// A request body file could not be opened or read, or its length changed while it was
        /// sent. When it cannot be opened, nothing was sent.
        public static let fileUnreadable = Code(.fileUnreadable)
        /// The file for a downloaded body could not be created (it already exists, is a symbolic
        /// link, or its directory is not writable; nothing was sent) or could not be written
        /// while receiving. A partly written file is removed.
        public static let fileNotWritable = Code(.fileNotWritable)
        /// A streamed request body threw, or produced fewer or more bytes than its declared
        /// length; the exchange was abandoned midway.
        public static let bodyStreamFailed = Code(.bodyStreamFailed)

        /// The request requires authentication but the client has no credential source
        /// (no `AuthorizationMiddleware`): a configuration mistake, found before sending.
        public static let missingCredentialSource = Code(.missingCredentialSource)
        /// A middleware threw an error that is not a ``CurlewError``; it is in
        /// ``CurlewError/underlying`` and the middleware's kind in ``CurlewError/stage``.
        public static let middlewareFailed = Code(.middlewareFailed)
        /// Your own code in a chain step threw an error that is not a ``CurlewError`` (a step that
        /// could not build its request from the previous answer), or — in the outcome a batch
        /// reports to its accessories — in a batch operation; the original is in
        /// ``CurlewError/underlying``. Not a network failure: retrying the call does not help.
        public static let operationFailed = Code(.operationFailed)

        // The codes of `CurlewTesting`'s mocks. They stay in the core: every error leaving a call
        // is a `CurlewError`, and a mocked call fails through the same path as a real one.

        /// Mocks are on and the fixture the call needs does not exist; the message names the file
        /// looked for. Nothing was sent: mocks never fall back to the network.
        public static let fixtureNotFound = Code(.fixtureNotFound)
        /// A fixture name or scenario would leave the fixture directory (`../`, `%2e%2e%2f`, an
        /// absolute path, NUL, a symbolic link leading outside); nothing was read.
        public static let fixturePathRejected = Code(.fixturePathRejected)
        /// A fixture or its metadata is malformed (unreadable JSON, an unknown simulated error).
        public static let fixtureInvalid = Code(.fixtureInvalid)
        /// No value of the response type could be generated (a validation rule no generated value
        /// met, a type the generator cannot build); the message says which.
        public static let mockGenerationFailed = Code(.mockGenerationFailed)
        /// A `CachePolicy.cacheOnly(maxAge:)` call, or a `CachePolicy.http` call whose request
        /// said `Cache-Control: only-if-cached`, found no usable stored answer; nothing was sent.
        public static let cacheMiss = Code(.cacheMiss)
        /// A download's destination file already exists and the call did not allow replacing it
        /// (`DownloadOptions.replacesExisting`); nothing was overwritten.
        public static let destinationExists = Code(.destinationExists)
        /// A download was answered with a content type it refuses (JSON instead of a file,
        /// `DownloadOptions.refusedContentTypes`); the body is in ``CurlewError/responseBody``
        /// and nothing is left at the destination.
        public static let unexpectedContentType = Code(.unexpectedContentType)
        /// A download's `206` answer cannot continue the file: its `Content-Range` starts after
        /// the byte asked for (or ends before it, or is missing). A resumed download starts over
        /// once before reporting it.
        public static let rangeMismatch = Code(.rangeMismatch)
        /// The resource changed since the partial file was written (another validator in a
        /// `206`); Curlew restarts the download once before reporting it.
        public static let resourceChanged = Code(.resourceChanged)
        /// A download ended with another length than the server announced.
        public static let downloadIncomplete = Code(.downloadIncomplete)
        /// Another resumable download of the same URL to the same destination — in this process
        /// or another — holds the partial file's lock; nothing was sent and the partial file was
        /// not touched. Retry once it has finished.
        public static let downloadInProgress = Code(.downloadInProgress)
        /// The server's certificate does not chain to a trusted root: self-signed, or issued by an
        /// authority that is not in ``TLSOptions/trustRoots``.
        public static let tlsCertificateUntrusted = Code(.tlsCertificateUntrusted)
        /// The server's certificate (or one in its chain) has expired or is not valid yet.
        public static let tlsCertificateExpired = Code(.tlsCertificateExpired)
        /// The server's certificate is valid but for another host name than the URL's.
        public static let tlsHostnameMismatch = Code(.tlsHostnameMismatch)
        /// The server's public key is none of ``TLSOptions/pinnedPublicKeys``.
        public static let tlsPinMismatch = Code(.tlsPinMismatch)
        /// The client certificate or its key could not be used: unreadable, not PEM, a wrong
        /// password, or a key that does not match the certificate. Nothing was sent.
        public static let tlsClientCertificateInvalid = Code(.tlsClientCertificateInvalid)
        /// The proxy refused the request: a `CONNECT` answered with another status than 2xx
        /// (authentication required or refused, a port not allowed), a 407 (Proxy
        /// Authentication Required) to a request an HTTP proxy forwards, or a SOCKS failure.
        public static let proxyFailure = Code(.proxyFailure)
        /// The connection options cannot be used (a proxy host or port, an excluded host, a
        /// speed limit out of range, a timeout of zero or less), or another setting cannot be
        /// honoured (a middleware's refused setting, a queue limit below 1); nothing was sent.
        public static let invalidConnectionSettings = Code(.invalidConnectionSettings)
        /// The call's queue name (`RequestOptions.queue`, `ClientConfiguration.defaultQueue`) is
        /// empty or only white space — a setting left blank, which would have put every such call
        /// in one serial queue; nothing was sent. Use `nil` for no queue.
        public static let invalidQueueName = Code(.invalidQueueName)
        /// A call asked for a `CachePolicy` other than `CachePolicy.networkOnly` on a client
        /// (or call) without a `ResponseCache` in its middleware; nothing was sent.
        public static let cacheNotConfigured = Code(.cacheNotConfigured)
        /// A call asked for a `CachePolicy` other than `CachePolicy.networkOnly` while its body
        /// is streamed to the caller (`APIClient.stream(_:highWaterMark:options:)`): the cache
        /// stores and serves whole bodies; nothing was sent.
        public static let cachePolicyConflict = Code(.cachePolicyConflict)
        /// The endpoint type declares a property the endpoint protocol no longer reads
        /// (`queueName`, `requiresAuthentication`, `usesAccessories`, `middleware`,
        /// `skippedMiddleware`, now in `RequestOptions`), or a stored `options` that is not
        /// `RequestOptions` and so is never used. Raised in debug builds only (a release build
        /// logs it once per type); nothing was sent.
        public static let removedEndpointProperty = Code(.removedEndpointProperty)

        /// The response broke HTTP framing: a head that ends without its blank line, conflicting
        /// `Content-Length` values, a `Transfer-Encoding` whose last coding is not `chunked` (or
        /// beside a `Content-Length`), malformed chunks, a compressed body that ends before its
        /// stream does, an HTTP/0.9 or otherwise unparsable status line, an invalid status code.
        /// The connection is not reused.
        public static let protocolError = Code(.protocolError)
        /// The connection closed after the request was sent and before any response, and the
        /// request was not sent again because it is not idempotent (POST, PATCH, …) or its body
        /// cannot be replayed. The server may or may not have acted on it.
        public static let connectionClosedBeforeResponse = Code(.connectionClosedBeforeResponse)
        /// A redirect would go from `https` to `http`; refused unless
        /// ``TransferOptions/allowsInsecureRedirects`` is set.
        public static let insecureRedirect = Code(.insecureRedirect)

        /// The call's deadline (`withDeadline`) passed: before the call or an attempt started —
        /// then nothing was sent — or during the exchange, which was cut off at the deadline.
        public static let deadlineExceeded = Code(.deadlineExceeded)
        /// The origin's circuit breaker is open after too many failures there: the call failed at
        /// once and nothing was sent (`CircuitBreakerMiddleware`).
        public static let circuitOpen = Code(.circuitOpen)
        /// The origin's adaptive concurrency limit was reached and no place to wait was left: the
        /// call failed at once and nothing was sent (`AdaptiveConcurrencyMiddleware`).
        public static let concurrencyLimitExceeded = Code(.concurrencyLimitExceeded)

        /// The level this code belongs to.
        public var level: Level {
            switch base {
            case .cannotConnect, .dnsFailure, .tlsFailure, .connectTimeout, .totalTimeout, .idleTimeout,
                .connectionReset, .emptyReply, .tooManyRedirects, .redirectRefused, .bodyTooLarge,
                .shutdown, .transportFailure, .bodyStreamFailed, .cacheMiss, .rangeMismatch, .resourceChanged,
                .downloadIncomplete, .protocolError, .connectionClosedBeforeResponse, .insecureRedirect,
                .deadlineExceeded, .circuitOpen, .headTimeout, .concurrencyLimitExceeded:
                .transport
            case .unacceptableStatus, .unexpectedContentType: .httpStatus
            case .serverError: .server
            case .decodingFailed, .validationFailed: .dataFormat
            case .unauthorized, .notLoggedIn, .sessionEnded, .refreshFailed: .auth
            case .cancelled: .cancelled
            case .malformedURL, .unsupportedScheme, .invalidHeader, .invalidMethod, .invalidPath,
                .encodingFailed, .missingCredentialSource, .middlewareFailed, .operationFailed, .fileUnreadable, .fileNotWritable,
                .destinationExists, .downloadInProgress:
                .invalidRequest
            case .fixtureNotFound, .fixturePathRejected, .fixtureInvalid, .mockGenerationFailed:
                .invalidRequest
            case .tlsCertificateUntrusted, .tlsCertificateExpired, .tlsHostnameMismatch, .tlsPinMismatch,
                .tlsClientCertificateInvalid, .proxyFailure:
                .transport
            case .invalidConnectionSettings, .cacheNotConfigured, .cachePolicyConflict, .removedEndpointProperty, .invalidQueueName:
                .invalidRequest
            }
        }

        /// The code's name, e.g. `idleTimeout`.
        public var description: String { base.rawValue }
    }
}
