import Curlew
import Foundation
import Testing
import TestSupport

/// Curlew's own validation of a decoded value and of a top-level array's elements
/// (`ValidatableModel`); the wrappers' validation (polymorphic members, `@Validated`) is tested in
/// CurlewDecodingTests.
@Suite("Validation of decoded values")
struct ValidationTests {
    @Test func validationOfTopLevelValuesAndArrayElements() async throws {
        #expect(try await mockClient(#"{"id":"a","width":5}"#).send(FetchAt<Ranged>()).width == 5)
        let single = await #expect(throws: CurlewError.self) { try await mockClient(#"{"d":{"id":"","width":5}}"#).send(FetchAt<Ranged>(at: "d")) }
        #expect(single?.code == .validationFailed)
        #expect(single?.level == .dataFormat)
        #expect(single?.dataPath == "d.id")
        #expect(single?.message == "d.id: must not be empty")
        #expect(single?.request?.description == "GET https://api.test/p")

        let list = #"{"resp":{"data":[{"id":"a","width":5},{"id":"b","width":5},{"id":"c","width":5},{"id":"d","width":0}]}}"#
        let element = await #expect(throws: CurlewError.self) { try await mockClient(list).send(FetchAt<[Ranged]>(at: "resp.data")) }
        #expect(element?.code == .validationFailed)
        #expect(element?.message == "resp.data[3].width: expected 1...10000, found 0")

        // An optional value is validated as the value it holds (the check looks through it).
        let optional = await #expect(throws: CurlewError.self) { try await mockClient(#"{"id":"","width":5}"#).send(FetchAt<Ranged?>()) }
        #expect(optional?.code == .validationFailed)
        #expect(optional?.message == "id: must not be empty")
        #expect(try await mockClient("null").send(FetchAt<Ranged?>()) == nil)
        // A type that is neither validatable nor an array is not looked at.
        #expect(try await mockClient(#"{"id":"","width":0}"#).send(FetchAt<Unchecked>()).width == 0)
    }

    private struct Unchecked: Decodable, Sendable {
        var id: String
        var width: Int
    }
}
