import Curlew
import CurlewTesting
import Testing
import TestSupport

/// An option a capability might add.
enum ShelfLifeKey: RequestOptionKey {
    static let defaultValue: Duration? = nil
}

extension RequestOptions {
    var shelfLife: Duration? {
        get { self[ShelfLifeKey.self] }
        set { self[ShelfLifeKey.self] = newValue }
    }
}

@Suite("Request option keys")
struct RequestOptionKeyTests {
    @Test func anOptionAddedByAKeyHasItsDefaultAndCarriesACallSiteValueToTheTransport() async throws {
        #expect(RequestOptions().shelfLife == nil)
        let transport = MockTransport { .text("ok", for: $0) }
        let client = APIClient(baseURL: "https://api.test", transport: transport)
        _ = try await client.send(Send(path: "a"))
        _ = try await client.send(Send(path: "b")) { $0.shelfLife = .seconds(8 * 3600) }
        #expect(transport.contexts.map(\.options.shelfLife) == [nil, .seconds(28_800)])
    }
}
