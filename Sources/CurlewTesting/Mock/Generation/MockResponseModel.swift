import Curlew
internal import Foundation

/// The call's endpoint, as much as a generated mock needs of it: its `Endpoint.Response` type,
/// key path and envelope. A ``MockMiddleware`` whose mode is ``MockMode/generated(by:)`` makes
/// one from the endpoint the client puts in every call's `MiddlewareContext` (the same value the
/// innermost status and envelope checks read), so the client itself knows nothing of mocks and
/// calls without generated mocks pay nothing.
struct MockResponseModel: Sendable {
    /// The response type's name, for the answer's source detail.
    let typeName: String
    /// Makes the whole body (the generated response, placed and wrapped) with a generator; `nil`
    /// when the endpoint's response type is not `Decodable`.
    let makeBody: (@Sendable (MockGenerator) throws(CurlewError) -> Data)?

    init<R: Endpoint>(_ request: R) {
        typeName = String(describing: R.Response.self)
        guard R.Response.self is any Decodable.Type else {
            makeBody = nil
            return
        }
        let keyPath = request.keyPath
        let envelope = request.envelope
        makeBody = { generator throws(CurlewError) in
            // Cast again inside: a metatype is not Sendable, so the closure cannot capture one.
            guard let decodable = R.Response.self as? any Decodable.Type else { return Data() }
            return try generator.body(generating: decodable, keyPath: keyPath, envelope: envelope)
        }
    }

    /// The answer `generator` gives for this endpoint.
    /// - Throws: `.mockGenerationFailed` when the response type is not `Decodable` or no value
    ///   could be generated.
    func answer(by generator: MockGenerator, requestName: String) throws(CurlewError) -> MockAnswer {
        guard let makeBody else {
            throw CurlewError(
                code: .mockGenerationFailed,
                message: "\(requestName).Response (\(typeName)) is not Decodable: a generated mock cannot invent it; use a fixture or a stub")
        }
        return MockAnswer(
            headers: [.contentType: "application/json"], body: try makeBody(generator),
            name: "generated \(typeName) seed \(generator.seed)")
    }
}
