public import Curlew
internal import Foundation

/// Stubs in code: one answer, one answer per scenario, or a closure that looks at the
/// request. Stubbed answers go through the whole request path like any mock.
///
/// ```swift
/// let stub = MockStub(.json(#"{"total": 2}"#), scenarios: [
///     "empty": .json(#"{"total": 0}"#),
///     "slow": .json(#"{"total": 2}"#, delay: .seconds(2)),
///     "offline": .failure(.cannotConnect),
/// ])
/// let results = try await client.send(SearchRequest(key: "fog")) { $0.mock = .stub(stub); $0.mockScenario = "empty" }
/// ```
public struct MockStub: Sendable {
    /// Produces the answer for a request and the call's scenario.
    public typealias Responder = @Sendable (PreparedRequest, _ scenario: String?) async throws -> MockAnswer

    let respond: Responder

    /// A stub answering every call with `answer`, whatever the scenario.
    public init(_ answer: MockAnswer) {
        self.respond = { _, _ in answer }
    }

    /// A stub with a default answer and named scenarios; a scenario it does not have fails the
    /// call with `.fixtureNotFound`.
    public init(_ answer: MockAnswer, scenarios: [String: MockAnswer]) {
        self.respond = { _, scenario in
            guard let scenario else { return answer }
            guard let chosen = scenarios[scenario] else {
                throw CurlewError(
                    code: .fixtureNotFound,
                    message: "the stub has no scenario \"\(scenario)\" (it has: \(scenarios.keys.sorted().joined(separator: ", ")))")
            }
            return chosen
        }
    }

    /// A stub computing its answer from the request and scenario.
    public init(_ respond: @escaping Responder) {
        self.respond = respond
    }
}
