public import Curlew

/// The per-call mock mode. `CurlewTesting` adds its call options to `RequestOptions` through
/// `RequestOptionKey`, the way any capability outside the core declares its own: the core's
/// options know nothing of mocks.
enum MockModeKey: RequestOptionKey {
    static let defaultValue: MockMode? = nil
}

/// The per-call scenario.
enum MockScenarioKey: RequestOptionKey {
    static let defaultValue: String? = nil
}

extension RequestOptions {
    /// Whether and how this call is answered by a mock: fixtures, a stub or generated data, or
    /// ``MockMode/off`` to use the network even on a client whose ``MockMiddleware`` mocks
    /// everything. `nil` (the default) leaves the choice to the client.
    ///
    /// Setting a mode also adds a ``MockMiddleware`` to the call's `middleware` (once), so it
    /// works on any client; mocks are only ever switched on by code like this:
    ///
    /// ```swift
    /// let results = try await client.send(SearchRequest(key: "sunset")) {
    ///     $0.mock = .fixtures(store)
    ///     $0.mockScenario = "empty"          // SearchRequest.empty.json
    /// }
    /// ```
    public var mock: MockMode? {
        get { self[MockModeKey.self] }
        set {
            self[MockModeKey.self] = newValue
            if newValue != nil, !middleware.contains(where: { $0 is MockMiddleware }) {
                middleware.append(MockMiddleware())
            }
        }
    }

    /// The scenario a mock answers with (`"empty"` reads `SearchRequest.empty.json`); `nil` for
    /// the task's ``MockScenario/current``, then the default fixture.
    public var mockScenario: String? {
        get { self[MockScenarioKey.self] }
        set { self[MockScenarioKey.self] = newValue }
    }
}
