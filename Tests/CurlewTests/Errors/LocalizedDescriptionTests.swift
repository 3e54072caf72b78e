import Curlew
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// `error.localizedDescription` is what most logging code and UIs print. Foundation's default
/// for a Swift error is "The operation could not be completed. (… error 1.)", which says nothing;
/// Curlew's errors give their own description instead.
@Suite("Localized descriptions")
struct LocalizedDescriptionTests {
    struct Missing: Endpoint {
        typealias Response = Data
        var path: String { "/pictures/42" }
    }

    @Test func aCurlewErrorsLocalizedDescriptionIsItsDescription() async throws {
        try await withLoopback(handler: { _ in .text("no such picture", status: 404) }) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Missing()) }
            let thrown = try #require(error)
            #expect(thrown.code == .unacceptableStatus)
            // Through `any Error`, as a `catch` without a pattern sees it.
            let erased: any Error = thrown
            #expect(erased.localizedDescription == thrown.description)
            #expect(erased.localizedDescription.hasPrefix("unacceptableStatus: "))
            #expect(erased.localizedDescription.contains("(GET \(server.baseURL)/pictures/42)"))
            #expect(erased.localizedDescription.contains("[HTTP 404]"))
            #expect(erased.localizedDescription.contains("body: no such picture"))
            #expect(server.requestCount == 1)
        }
    }

    @Test func aValidationFailuresLocalizedDescriptionNamesTheFieldAndReason() {
        let erased: any Error = ValidationFailure("must not be empty", field: "items[2].name")
        #expect(erased.localizedDescription == "items[2].name: must not be empty")
    }
}
