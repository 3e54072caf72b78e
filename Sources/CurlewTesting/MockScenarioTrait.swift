public import Curlew
public import Testing

/// A swift-testing trait that runs a test (or every test of a suite) with a mock scenario:
///
/// ```swift
/// @Test(.mockScenario("empty")) func showsNothingFound() async throws { … }          // every request type
/// @Test(.mockScenario("error", for: SearchRequest.self)) func showsTheError() async throws { … }
/// ```
///
/// It sets ``MockScenario/current`` (or ``MockScenario/byRequest``) for the test's task only, so
/// tests running in parallel keep their own scenarios. It chooses a scenario; it does not switch
/// mocks on.
public struct MockScenarioTrait: TestTrait, SuiteTrait, TestScoping {
    /// The scenario.
    public let scenario: String
    /// The request type name it applies to, `nil` for all.
    public let requestName: String?

    /// Applies to every test of a suite.
    public var isRecursive: Bool { true }

    /// Runs the test with the scenario set.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        if let requestName {
            var selection = MockScenario.byRequest
            selection[requestName] = scenario
            try await MockScenario.$byRequest.withValue(selection) { try await function() }
        } else {
            try await MockScenario.$current.withValue(scenario) { try await function() }
        }
    }
}

extension Trait where Self == MockScenarioTrait {
    /// Runs the test with mocks answering from `scenario` (`SearchRequest.<scenario>.json`).
    public static func mockScenario(_ scenario: String) -> MockScenarioTrait {
        MockScenarioTrait(scenario: scenario, requestName: nil)
    }

    /// Runs the test with `request`'s mocks answering from `scenario`; other types keep theirs.
    public static func mockScenario<R: Endpoint>(_ scenario: String, for request: R.Type) -> MockScenarioTrait {
        MockScenarioTrait(scenario: scenario, requestName: String(describing: R.self))
    }
}
