@testable import Curlew
@testable import CurlewCore
import Testing

/// ``TokenStore/snapshot`` (what the authorization middleware reads instead of hopping onto the
/// actor) always equals ``TokenStore/current()`` once a change has returned.
@Suite("Token store snapshot")
struct TokenSnapshotTests {
    @Test func followsEveryChange() async throws {
        let store = TokenStore(credential: .init(accessToken: "a"))
        #expect(store.snapshot?.0.accessToken == "a")
        #expect(store.snapshot?.1 == 0)

        await store.update(.init(accessToken: "b", refreshToken: "r"))
        #expect(store.snapshot?.0 == TokenStore.Credential(accessToken: "b", refreshToken: "r"))
        #expect(store.snapshot?.1 == 1)

        let (fresh, version) = try await store.refreshed(after: 1) { old in .init(accessToken: old.accessToken + "2") }
        #expect(fresh.accessToken == "b2")
        #expect(version == 2)
        #expect(store.snapshot?.0.accessToken == "b2")
        #expect(store.snapshot?.1 == 2)
        let current = await store.current()
        #expect(current?.0 == store.snapshot?.0)
        #expect(current?.1 == store.snapshot?.1)

        await store.clear()
        #expect(store.snapshot == nil)
        #expect(await store.version == 3)
    }

    @Test func startsFromStorage() {
        final class Saved: CredentialStorage, Sendable {
            func loadCredential() -> TokenStore.Credential? { .init(accessToken: "kept") }
            func saveCredential(_ credential: TokenStore.Credential?) {}
        }
        #expect(TokenStore(storage: Saved()).snapshot?.0.accessToken == "kept")
        #expect(TokenStore().snapshot == nil)
    }
}
