import NIOCore
import NIOHTTP1

/// The handler task's way back to its connection: every call hops to the event loop and acts
/// on the ``HTTPConnectionHandler`` there, for one exchange (request/response pair) only.
struct ExchangeResponder: Sendable {
    let handler: NIOLoopBound<HTTPConnectionHandler>
    let eventLoop: any EventLoop
    let exchangeID: Int

    /// Writes head, body and end in one go.
    func writeComplete(head: HTTPResponseHead, body: [UInt8]?, closeConnection: Bool) async throws {
        let handler = self.handler
        let exchangeID = self.exchangeID
        try await eventLoop.flatSubmit {
            let connection = handler.value
            let headWritten = connection.writeHead(head, sendsBody: body != nil, exchangeID: exchangeID, flush: false)
            if let body {
                _ = connection.writeBody(body, exchangeID: exchangeID, flush: false)
            }
            let ended = connection.finishResponse(exchangeID: exchangeID, closeConnection: closeConnection)
            return headWritten.and(ended).map { _ in }
        }.get()
    }

    /// Writes and flushes the head of a streamed response.
    func writeHead(_ head: HTTPResponseHead, sendsBody: Bool) async throws {
        let handler = self.handler
        let exchangeID = self.exchangeID
        try await eventLoop.flatSubmit {
            handler.value.writeHead(head, sendsBody: sendsBody, exchangeID: exchangeID)
        }.get()
    }

    /// Writes and flushes one body chunk; completes once it is handed to the socket.
    func writeBody(_ bytes: [UInt8]) async throws {
        let handler = self.handler
        let exchangeID = self.exchangeID
        try await eventLoop.flatSubmit {
            handler.value.writeBody(bytes, exchangeID: exchangeID)
        }.get()
    }

    /// Ends a streamed response.
    func finish(closeConnection: Bool) async throws {
        let handler = self.handler
        let exchangeID = self.exchangeID
        try await eventLoop.flatSubmit {
            handler.value.finishResponse(exchangeID: exchangeID, closeConnection: closeConnection)
        }.get()
    }

    /// Abandons the response and closes the connection.
    func abort() {
        let handler = self.handler
        let exchangeID = self.exchangeID
        eventLoop.execute {
            handler.value.abortResponse(exchangeID: exchangeID)
        }
    }
}
