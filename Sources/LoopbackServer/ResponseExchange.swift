/// Runs the user's handler for one request and writes its response (the task side of an exchange).
enum ResponseExchange {
    static func run(
        request: ServerRequest,
        plan: ResponsePlan,
        core: ServerCore,
        responder: ExchangeResponder
    ) async {
        let response = await core.handler(request)
        let decision = plan.decide(for: response, serverClosing: core.isShuttingDown)

        switch response.body {
        case .bytes(let bytes):
            // Counted as finished before the response leaves, so a client that has the full
            // response never sees the handler as still running.
            core.statistics.handlerFinished(path: request.path)
            try? await responder.writeComplete(
                head: decision.head,
                body: decision.sendsBody ? bytes : nil,
                closeConnection: decision.closeConnection
            )

        case .stream(let produce):
            var finished = false
            do {
                try await responder.writeHead(decision.head, sendsBody: decision.sendsBody)
                if decision.sendsBody {
                    try await produce(ResponseBodyWriter(responder.writeBody))
                }
                core.statistics.handlerFinished(path: request.path)
                finished = true
                try await responder.finish(closeConnection: decision.closeConnection)
            } catch {
                if !finished {
                    core.statistics.handlerFinished(path: request.path)
                }
                responder.abort()
            }
        }
    }
}
