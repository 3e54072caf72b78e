import NIOCore
import NIOHTTP1

/// Serves the requests of one connection, one at a time, on the channel's event loop.
///
/// Each complete request is recorded and handed to a `Task` running the user's handler
/// (see ``ResponseExchange``); the task comes back to the event loop through an
/// ``ExchangeResponder`` to write the response. The channel keeps reading while a handler runs,
/// so a client closing or resetting the connection is noticed at once; bytes of a pipelined
/// next request are queued until the current response is finished.
final class HTTPConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum Phase {
        /// Waiting for a request head.
        case idle
        /// Reading a request (head seen, end not yet).
        case receiving(HTTPRequestHead)
        /// A handler or its response is in progress.
        case responding(Exchange)
        /// The server decided to close the connection (after a final response or an abort).
        case closing
        /// The channel is inactive.
        case closed
    }

    private struct Exchange {
        var id: Int
        /// The `Content-Length` the head announced, when a body is actually sent.
        var declaredLength: Int?
        var bodyBytesWritten = 0
        var headWritten = false
    }

    private let core: ServerCore
    private let connectionID: Int
    private let connectionState = ConnectionState()
    private let eventLoop: any EventLoop
    private var context: ChannelHandlerContext?
    private var phase = Phase.idle
    private var requestBody: [UInt8] = []
    /// The most a request's `Content-Length` reserves ahead of its bytes.
    private static let largestReservation = 1 << 30
    /// The bytes of the current request's body counted and dropped (`nil`: the body is kept).
    private var discardedBodyLength: Int?
    private var backlog: [HTTPServerRequestPart] = []
    private var handlerTask: Task<Void, Never>?
    private var lastExchangeID = 0
    private var wasActive = false

    init(core: ServerCore, connectionID: Int, eventLoop: any EventLoop) {
        self.core = core
        self.connectionID = connectionID
        self.eventLoop = eventLoop
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive {
            markActive()
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        markActive()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .responding = phase, !core.isShuttingDown {
            core.statistics.clientDisconnectedDuringResponse()
        }
        phase = .closed
        backlog = []
        requestBody = []
        if wasActive {
            wasActive = false
            core.statistics.connectionClosed()
        }
        // Statistics first, so a handler woken by `closed()` already sees the disconnect counted.
        connectionState.markClosed()
        handlerTask?.cancel()
        handlerTask = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch phase {
        case .idle, .receiving:
            process(part, context: context)
        case .responding:
            backlog.append(part)
        case .closing, .closed:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Read errors (e.g. ECONNRESET) and protocol errors: the connection is done. This is not
        // a server-initiated close in the sense of `disconnectsDuringResponse`.
        context.close(promise: nil)
    }

    private func markActive() {
        guard !wasActive else { return }
        wasActive = true
        core.statistics.connectionOpened()
    }

    // MARK: Requests

    private func process(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            phase = .receiving(head)
            requestBody = []
            let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? head.uri
            discardedBodyLength = core.discardsBody(head.method.rawValue, path) ? 0 : nil
            // Room for the announced body at once: growing a half-gibibyte array by doubling
            // copies it again and again on the event loop, which every server (and postgres-nio)
            // of the process shares — seconds, on a loaded machine, in which no other connection
            // is served. The reservation is lazy memory, bounded for a length a client only claims.
            if discardedBodyLength == nil, let announced = head.headers.first(name: "content-length").flatMap(Int.init), announced > 0 {
                requestBody.reserveCapacity(min(announced, Self.largestReservation))
            }
            if head.version.major == 1, head.version.minor >= 1,
                head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" })
            {
                let interim = HTTPResponseHead(version: head.version, status: .continue)
                context.writeAndFlush(wrapOutboundOut(.head(interim)), promise: nil)
            }
        case .body(let buffer):
            if let discarded = discardedBodyLength {
                discardedBodyLength = discarded + buffer.readableBytes
            } else {
                requestBody.append(contentsOf: buffer.readableBytesView)
            }
        case .end:
            guard case .receiving(let head) = phase else { return }
            let body = requestBody
            requestBody = []
            let discarded = discardedBodyLength
            discardedBodyLength = nil
            startExchange(head: head, body: body, discardedBodyLength: discarded, context: context)
        }
    }

    private func startExchange(head: HTTPRequestHead, body: [UInt8], discardedBodyLength: Int?, context: ChannelHandlerContext) {
        let request = ServerRequest(
            method: head.method.rawValue,
            uri: head.uri,
            headerFields: head.headers.map { ServerRequest.Field(name: $0.name, value: $0.value) },
            body: body,
            discardedBodyLength: discardedBodyLength,
            httpVersion: "HTTP/\(head.version.major).\(head.version.minor)",
            connection: ConnectionHandle(id: connectionID, state: connectionState)
        )
        core.statistics.requestReceived(request)

        lastExchangeID += 1
        phase = .responding(Exchange(id: lastExchangeID))
        let responder = ExchangeResponder(
            handler: NIOLoopBound(self, eventLoop: context.eventLoop),
            eventLoop: context.eventLoop,
            exchangeID: lastExchangeID
        )
        let plan = ResponsePlan(
            version: head.version,
            isHeadRequest: head.method == .HEAD,
            requestKeepAlive: head.isKeepAlive
        )
        let core = self.core
        handlerTask = Task(executorPreference: HandlerExecutor.shared) {
            await ResponseExchange.run(request: request, plan: plan, core: core, responder: responder)
        }
    }

    /// Processes queued parts of pipelined requests until one of them starts a new exchange.
    private func drainBacklog(context: ChannelHandlerContext) {
        while !backlog.isEmpty {
            switch phase {
            case .idle, .receiving:
                process(backlog.removeFirst(), context: context)
            case .responding, .closing, .closed:
                return
            }
        }
    }

    // MARK: Writing (called on the event loop by ExchangeResponder)

    private func currentExchange(_ exchangeID: Int) -> (ChannelHandlerContext, Exchange)? {
        guard let context, case .responding(let exchange) = phase, exchange.id == exchangeID else {
            return nil
        }
        return (context, exchange)
    }

    private var connectionClosedFuture: EventLoopFuture<Void> {
        eventLoop.makeFailedFuture(LoopbackServerError.connectionClosed)
    }

    /// Writes the response head. `sendsBody` is `false` for responses that carry no body
    /// (HEAD requests, 204, 304), whose `Content-Length` is then not checked.
    func writeHead(
        _ head: HTTPResponseHead,
        sendsBody: Bool,
        exchangeID: Int,
        flush: Bool = true
    ) -> EventLoopFuture<Void> {
        guard let (context, exchange) = currentExchange(exchangeID), !exchange.headWritten else {
            return connectionClosedFuture
        }
        var updated = exchange
        updated.headWritten = true
        updated.declaredLength = sendsBody ? head.headers.first(name: "content-length").flatMap { Int($0) } : nil
        phase = .responding(updated)
        let promise = eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(.head(head)), promise: promise)
        if flush {
            context.flush()
        }
        return promise.futureResult
    }

    func writeBody(_ bytes: [UInt8], exchangeID: Int, flush: Bool = true) -> EventLoopFuture<Void> {
        guard let (context, exchange) = currentExchange(exchangeID), exchange.headWritten else {
            return connectionClosedFuture
        }
        guard !bytes.isEmpty else {
            return eventLoop.makeSucceededVoidFuture()
        }
        var updated = exchange
        updated.bodyBytesWritten += bytes.count
        phase = .responding(updated)
        let buffer = context.channel.allocator.buffer(bytes: bytes)
        let promise = eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: promise)
        if flush {
            context.flush()
        }
        return promise.futureResult
    }

    /// Writes the end of the response; then either closes the connection or serves the next request.
    func finishResponse(exchangeID: Int, closeConnection: Bool) -> EventLoopFuture<Void> {
        guard let (context, exchange) = currentExchange(exchangeID), exchange.headWritten else {
            return connectionClosedFuture
        }
        // A body that does not match its declared Content-Length leaves the client out of sync.
        let lengthMismatch = exchange.declaredLength.map { $0 != exchange.bodyBytesWritten } ?? false
        let mustClose = closeConnection || lengthMismatch
        handlerTask = nil
        phase = mustClose ? .closing : .idle
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if mustClose {
            backlog = []
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        } else {
            drainBacklog(context: context)
        }
        return written
    }

    /// Gives up on the current response (its stream closure failed) and closes the connection.
    func abortResponse(exchangeID: Int) {
        guard let (context, _) = currentExchange(exchangeID) else { return }
        handlerTask = nil
        phase = .closing
        backlog = []
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension HTTPConnectionHandler: Sendable {}
