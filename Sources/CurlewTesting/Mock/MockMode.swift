public import Curlew
internal import Foundation

/// How a call is answered when mocks are on: from fixture files, from a stub, from data generated
/// from the response type, or not at all (``off``, the network).
///
/// Modes are set explicitly in code — per call or per endpoint type with
/// ``Curlew/RequestOptions/mock``, or for a whole client with a ``MockMiddleware`` — never from the
/// environment. Whatever the mode, the answer goes through the whole request path: every
/// middleware, the status and envelope checks, `Endpoint.didReceive(_:)`, decoding and
/// validation. Its `APIResponse.source` is `ResponseSource.mock` with a
/// `ResponseSource.detail` naming the fixture, stub scenario or generator.
///
/// ```swift
/// let store = try FixtureStore(directory: "Tests/Fixtures")
/// let client = APIClient(configuration: ClientConfiguration(
///     baseURL: "https://api.example.com", middleware: [MockMiddleware(.fixtures(store))]))
/// ```
public struct MockMode: Sendable {
    enum Source: Sendable {
        case off
        case fixtures(FixtureStore, name: String?)
        case stub(MockStub)
        case generated(GeneratedMock)
        case generatedPerCall(MockGenerator)
    }

    let source: Source
    /// Waits out answer delays. Default: ``MockClock/continuous``.
    public var clock: MockClock = .continuous

    /// No mock: the call goes to the network (overrides a client-wide ``MockMiddleware``).
    public static let off = MockMode(source: .off)

    /// Answers from the store's fixture named after the request type (`SearchRequest.json`,
    /// `SearchRequest.<scenario>.json`), or after `name` when given.
    public static func fixtures(_ store: FixtureStore, name: String? = nil) -> MockMode {
        MockMode(source: .fixtures(store, name: name))
    }

    /// Answers from a stub.
    public static func stub(_ stub: MockStub) -> MockMode {
        MockMode(source: .stub(stub))
    }

    /// Answers every call with `answer`.
    public static func answer(_ answer: MockAnswer) -> MockMode {
        MockMode(source: .stub(MockStub(answer)))
    }

    /// Answers with a body generated from `request`'s `Endpoint.Response` type, wrapped in its
    /// `Endpoint.envelope` and placed at its `Endpoint.keyPath`, so it decodes unchanged.
    /// - Parameters:
    ///   - request: The endpoint (its type, envelope and key path are used).
    ///   - generator: Seed, array sizes, optionals, overrides, the decoder whose strategies apply.
    public static func generated<R: Endpoint>(for request: R, by generator: MockGenerator = MockGenerator()) -> MockMode
    where R.Response: Decodable {
        MockMode(source: .generated(GeneratedMock(request: request, generator: generator)))
    }

    /// Answers every call with a body generated from *that call's* endpoint `Endpoint.Response`
    /// type, wrapped in its `Endpoint.envelope` and placed at its `Endpoint.keyPath` — the
    /// client-wide automatic mock:
    ///
    /// ```swift
    /// let client = APIClient(configuration: ClientConfiguration(
    ///     baseURL: "https://api.example.com",
    ///     middleware: [MockMiddleware(.generated(by: MockGenerator(seed: 7)))]))
    /// let results = try await client.send(SearchRequest(key: "sunset"))   // invented, decodes
    /// ```
    ///
    /// A call whose response type is not `Decodable` fails with `.mockGenerationFailed`.
    public static func generated(by generator: MockGenerator = MockGenerator()) -> MockMode {
        MockMode(source: .generatedPerCall(generator))
    }

    /// Whether this mode generates from the call's own endpoint type.
    var generatesPerCall: Bool {
        if case .generatedPerCall = source { return true }
        return false
    }

    /// The same mode waiting out delays with `clock`.
    public func clock(_ clock: MockClock) -> MockMode {
        var copy = self
        copy.clock = clock
        return copy
    }

    /// Whether this mode lets the call go to the network.
    public var isOff: Bool {
        if case .off = source { return true }
        return false
    }

    /// The answer for one attempt; `model` is the call's endpoint for a mode that generates from
    /// it (``generated(by:)``), `nil` when the mode does not or no endpoint reached the mock.
    func answer(for request: PreparedRequest, context: TransportContext, model: MockResponseModel?) async throws -> MockAnswer {
        let scenario = MockScenario.resolve(options: context.options, requestName: context.requestName)
        switch source {
        case .off:
            throw CurlewError(code: .fixtureNotFound, message: "mocks are off for \(context.requestName)")
        case .fixtures(let store, let name):
            return try store.answer(for: name ?? context.requestName, scenario: scenario)
        case .stub(let stub):
            var answer = try await stub.respond(request, scenario)
            if answer.name == nil { answer.name = "stub \(context.requestName)" + (scenario.map { ".\($0)" } ?? "") }
            return answer
        case .generated(let generated):
            return try generated.answer()
        case .generatedPerCall(let generator):
            guard let model else {
                throw CurlewError(
                    code: .mockGenerationFailed,
                    message: "no endpoint type reached the generated mock for \(context.requestName) (a transport used outside APIClient)")
            }
            return try model.answer(by: generator, requestName: context.requestName)
        }
    }
}
