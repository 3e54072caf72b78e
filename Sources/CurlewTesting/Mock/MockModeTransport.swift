import Curlew
internal import Foundation

/// The transport a ``MockMiddleware`` installs for one call: asks the mode for an answer, waits
/// its delay on the mode's clock, throws its simulated failure or returns it as a raw response
/// honouring the call's body disposition (collected, streamed, written to a file or downloaded).
struct MockModeTransport: Transport {
    let mode: MockMode
    /// The call's endpoint, for a mode that generates from it (``MockMode/generated(by:)``).
    let model: MockResponseModel?

    nonisolated(nonsending) func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse {
        try Task.checkCancellation()
        let answer = try await mode.answer(for: request, context: context, model: model)
        if let delay = answer.delay, delay > .zero { try await mode.clock.sleep(delay) }
        try Task.checkCancellation()
        return try MockDelivery.deliver(answer, for: request, context: context)
    }
}

/// Turns a ``MockAnswer`` into what a transport returns: its simulated failure thrown, or its
/// body delivered where the call's disposition says (`ResponseBodyDisposition.deliver`, the core's hook).
enum MockDelivery {
    static func deliver(_ answer: MockAnswer, for request: PreparedRequest, context: TransportContext) throws -> RawResponse {
        if let failure = answer.failure {
            throw CurlewError(
                code: failure, message: "simulated \(failure) (\(answer.name ?? context.requestName))", request: request.summary)
        }
        let source = ResponseSource.mock.with(detail: answer.name ?? context.requestName)
        let content = try context.responseBody.deliver(answer.body, status: answer.status, headers: answer.headers, for: request)
        return RawResponse(status: answer.status, headers: answer.headers, content: content, url: request.url, source: source)
    }
}
