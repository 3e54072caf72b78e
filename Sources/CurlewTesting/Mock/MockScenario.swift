import Curlew

/// The scenario mocks answer with when the call's options name none (``Curlew/RequestOptions/mockScenario``):
/// task-local values, so each test (or each task) picks its own without affecting tests running
/// in parallel.
///
/// ```swift
/// try await MockScenario.$current.withValue("empty") {
///     let results = try await client.send(SearchRequest(key: "sunset"))   // SearchRequest.empty.json
/// }
/// try await MockScenario.$byRequest.withValue(["SearchRequest": "empty"]) {
///     // only SearchRequest answers from its "empty" scenario; other requests from their default
/// }
/// ```
///
/// In a swift-testing suite, `CurlewTesting`'s `.mockScenario("empty")` trait does the same for a
/// whole test. Scenarios only choose *which* fixture or stub answers; they never switch mocks on.
/// A scenario that has no fixture is an error (`.fixtureNotFound`), never a quiet fallback.
public enum MockScenario {
    /// The current task's scenario for every request type, `nil` for the default fixtures.
    @TaskLocal public static var current: String?
    /// The current task's scenario per request type name; wins over ``current``.
    @TaskLocal public static var byRequest: [String: String] = [:]

    /// The scenario for a call: the call's own option, then the task's choice for its type, then
    /// the task's general choice.
    static func resolve(options: RequestOptions, requestName: String) -> String? {
        options.mockScenario ?? byRequest[requestName] ?? current
    }
}
