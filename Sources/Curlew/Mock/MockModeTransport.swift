internal import Foundation

/// The transport a ``MockMiddleware`` installs for one call: asks the mode for an answer, waits
/// its delay on the mode's clock, throws its simulated failure or returns it as a raw response
/// honouring the call's body disposition (collected, streamed or written to a file).
struct MockModeTransport: Transport {
    let mode: MockMode

    nonisolated(nonsending) func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse {
        try Task.checkCancellation()
        let answer = try await mode.answer(for: request, context: context)
        if let delay = answer.delay, delay > .zero { try await mode.clock.sleep(delay) }
        try Task.checkCancellation()
        return try MockDelivery.deliver(answer, for: request, context: context)
    }
}

/// Turns a ``MockAnswer`` into what a transport returns.
enum MockDelivery {
    static func deliver(_ answer: MockAnswer, for request: PreparedRequest, context: TransportContext) throws -> RawResponse {
        if let failure = answer.failure {
            throw CurlewError(
                code: failure, message: "simulated \(failure) (\(answer.name ?? context.requestName))", request: request.summary)
        }
        let source = ResponseSource.mock.with(detail: answer.name ?? context.requestName)
        let content: ResponseContent
        switch context.responseBody.storage {
        case .collect:
            content = .data(answer.body)
        case .stream:
            let buffer = ResponseBodyBuffer(highWaterMark: max(answer.body.count, 1) + 1, onResume: {}, onCancel: {})
            if !answer.body.isEmpty { _ = answer.body.withUnsafeBytes { buffer.offer($0) } }
            buffer.finish(nil)
            content = .stream(ResponseBodyStream(buffer: buffer))
        case .file(let path):
            let sink = try FileBodySink.create(path: path, request: request.summary)
            if case .abort(let code, let message) = answer.body.withUnsafeBytes({ sink.receive($0) }) {
                throw CurlewError(code: code, message: message, request: request.summary)
            }
            if let error = sink.finish() { throw error }
            content = .file(path: path, length: Int64(answer.body.count))
        case .download(let target):
            // The same sink a real download uses, fed the mocked head and body.
            let sink = try DownloadBodySink.open(target, request: request.summary)
            var head = "HTTP/1.1 \(answer.status.code) \(answer.status.reasonPhrase)\r\n"
            for field in answer.headers { head += "\(field.name.rawName): \(field.value)\r\n" }
            head += "\r\n"
            sink.headArrived(status: answer.status.code, headerBlock: Array(head.utf8))
            if case .abort(let code, let message) = answer.body.withUnsafeBytes({ sink.receive($0) }) {
                let error = CurlewError(code: code, message: message, request: request.summary)
                sink.fail(error)
                throw error
            }
            if let error = sink.finish() { throw error }
            content = sink.content()
        }
        return RawResponse(status: answer.status, headers: answer.headers, content: content, url: request.url, source: source)
    }
}
