import Curlew
import CurlewTesting
import Foundation
import LoopbackServer
import Testing
import TestSupport

@Suite("Generated mocks")
struct GeneratedMockTests {
    @Test func theSameSeedGivesTheSameBytesAndAnotherSeedOthers() throws {
        let first = try MockGenerator(seed: 7).jsonText(for: GenGallery.self)
        let again = try MockGenerator(seed: 7).jsonText(for: GenGallery.self)
        let other = try MockGenerator(seed: 8).jsonText(for: GenGallery.self)
        #expect(first == again)
        #expect(first != other)
        let gallery = try JSONDecoder().decode(GenGallery.self, from: Data(first.utf8))
        #expect(gallery.pictures.count == 3)
        #expect(gallery.labels.count == 3)
    }

    @Test func everyModelDecodes() throws {
        let generator = MockGenerator(seed: 3)
        _ = try generator.value(of: GenGallery.self)
        _ = try generator.value(of: GenLenient.self)
        _ = try generator.value(of: GenFeed.self)
        _ = try generator.value(of: GenHinted.self)
        _ = try generator.value(of: GenValidated.self)
        _ = try generator.value(of: [GenOwner].self)
        _ = try generator.value(of: MockSearchResults.self)
        _ = try generator.value(of: MockAlbum.self)
        _ = try generator.value(of: JSONValue.self)
        _ = try generator.value(of: GenRankedFeed.self)
        // The models the other suites decode from real servers.
        _ = try generator.value(of: LenientItem.self)
        _ = try generator.value(of: Ranged.self)
        _ = try generator.value(of: Owner.self)
        _ = try generator.value(of: Album.self)
        _ = try generator.value(of: Kind.self)
        _ = try generator.value(of: Level.self)
        _ = try generator.value(of: EnvelopedPicture.self)
        _ = try generator.value(of: ValidatedPicture.self)
        _ = try generator.value(of: Picture.self)
        _ = try generator.value(of: PictureList.self)
        _ = try generator.value(of: PictureDetails.self)
    }

    @Test func namesGuideTheValues() throws {
        let picture = try MockGenerator(seed: 11).value(of: GenPicture.self)
        #expect(picture.imageURL.hasPrefix("https://images.example.com/"))
        #expect(picture.imageURL.hasSuffix(".jpg"))
        #expect(picture.owner.avatar.absoluteString.hasPrefix("https://images.example.com/"))
        #expect(picture.owner.email.hasSuffix("@example.com"))
        #expect(picture.owner.name.split(separator: " ").count == 2)
        #expect((1000...99999).contains(picture.owner.id))
        #expect(picture.id.count == 12)
        #expect((1...20).contains(picture.count))
        #expect((0...5).contains(picture.rating))
        let year = Calendar(identifier: .gregorian).dateComponents(in: .gmt, from: picture.createdAt).year
        #expect(year == 2024 || year == 2025)
        #expect(picture.price > 0 && picture.price <= 500)
        #expect(picture.owner.nickname != nil)
        #expect(picture.caption != nil)
        #expect(picture.tags.count == 3)
    }

    @Test func lenientWrappersScopedAndEnumsGetAcceptedValues() throws {
        for seed in UInt64(1)...20 {
            let value = try MockGenerator(seed: seed).value(of: GenLenient.self)
            #expect(GenKind.allCases.contains(value.kind))
            #expect(value.width > 0)
        }
        let levels = Set(try (UInt64(1)...30).map { try MockGenerator(seed: $0).value(of: GenPicture.self).level })
        #expect(levels == Set(GenLevel.allCases))
    }

    @Test func aPolymorphicArrayHasEachMemberInTurn() throws {
        let json = try MockGenerator(seed: 5, arrayCount: 4).json(for: GenFeed.self)
        #expect(json.items?.arrayValue?.compactMap { $0.type?.stringValue } == ["pic", "video", "pic", "video"])
        let feed = try MockGenerator(seed: 5, arrayCount: 4).value(of: GenFeed.self)
        #expect(feed.items.count == 4)
        #expect(feed.items[0] is GenPic)
        #expect(feed.items[1] is GenVideo)
        let covers = Set(try (UInt64(1)...20).map { String(describing: type(of: try MockGenerator(seed: $0).value(of: GenFeed.self).cover)) })
        #expect(covers == ["GenPic", "GenVideo"])
    }

    @Test func hintsAndOverridesWinOverNames() throws {
        let hinted = try MockGenerator(seed: 2).value(of: GenHinted.self)
        #expect(ISO8601DateFormatter().date(from: hinted.published) != nil)
        #expect(hinted.nickname == nil)
        #expect((1...3).contains(hinted.stars))
        #expect(["a", "b"].contains(hinted.mode))
        #expect(hinted.pages.count == 5)

        let overridden = try MockGenerator(
            seed: 2, overrides: ["pictures.title": .value("Fixed"), "pictures.owner.nickname": .absent, "total": .int(42...42)]
        ).value(of: GenGallery.self)
        #expect(overridden.total == 42)
        #expect(overridden.pictures.map(\.title) == ["Fixed", "Fixed", "Fixed"])
        #expect(overridden.pictures.allSatisfy { $0.owner.nickname == nil })
    }

    @Test func optionalsCanBeLeftOut() throws {
        let sparse = try MockGenerator(seed: 4, optionals: .absent).value(of: GenPicture.self)
        #expect(sparse.caption == nil)
        #expect(sparse.owner.nickname == nil)
        let json = try MockGenerator(seed: 4, optionals: .absent).json(for: GenPicture.self)
        #expect(json.caption == nil)
    }

    @Test func validationIsMetOrTheRuleIsNamed() throws {
        let valid = try MockGenerator(seed: 9).value(of: GenValidated.self)
        #expect((1...10).contains(valid.width))
        let error = #expect(throws: CurlewError.self) { try MockGenerator(seed: 9, attempts: 4).value(of: GenImpossible.self) }
        #expect(error?.code == .mockGenerationFailed)
        #expect(error?.message.contains("code: must be exactly-this") == true)
        #expect(error?.message.contains("after 4 attempts") == true)
    }

    @Test func theDecodersStrategiesApply() throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .secondsSince1970
        let json = try MockGenerator(seed: 1, decoder: decoder).json(for: GenSnake.self)
        #expect(json.created_at?.intValue != nil)
        #expect(json.user_name?.stringValue != nil)
        let iso = JSONDecoder()
        iso.dateDecodingStrategy = .iso8601
        let text = try MockGenerator(seed: 1, decoder: iso).json(for: GenSnake.self)
        #expect(text.createdAt?.stringValue.flatMap { ISO8601DateFormatter().date(from: $0) } != nil)
    }

    @Test func theBodyIsWrappedInTheEndpointsEnvelopeAndKeyPath() throws {
        let body = try MockGenerator(seed: 6, arrayCount: 2).body(for: GenEnveloped())
        let json = try JSONDecoder().decode(JSONValue.self, from: body)
        #expect(json.code == .int(0))
        #expect(json.msg == .string("ok"))
        #expect(json.data?.owners?.arrayValue?.count == 2)
        let text = try MockGenerator(seed: 6, arrayCount: 2).bodyText(for: GenEnveloped())
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) == json)
    }

    @Test func theEnvelopesExtraSuccessConditionsAreMet() async throws {
        let generator = MockGenerator(seed: 6, arrayCount: 2)
        let json = try JSONDecoder().decode(JSONValue.self, from: try generator.body(for: GenHAccessRule()))
        #expect(json.status == .bool(true))
        #expect(json.msg == nil || json.msg == .null)
        #expect(json.meta?["kind"] == .string("list"))
        #expect(json.meta?.server != nil && json.meta?.server != .null)
        #expect(json.data?.arrayValue?.count == 2)
        try await withLoopback(handler: { _ in .json("[]") }) { server, client, _ in
            let request = GenHAccessRule()
            let response = try await client.response(for: request) { $0.mock = .generated(for: request, by: generator) }
            #expect(response.value == (try generator.value(of: [GenOwner].self)))
            #expect(response.source == .mock)
            #expect(response.businessCode == "true")
            let clientWide = try await client.response(for: request) { $0.mock = .generated(by: generator) }
            #expect(clientWide.value == response.value)
            #expect(server.requestCount == 0)
        }
    }

    @Test func aGeneratedModeAnswersThroughTheLoopbackClientWithoutTheServer() async throws {
        try await withLoopback(handler: { _ in .json("[]") }) { server, client, _ in
            let request = GenEnveloped()
            let response = try await client.response(for: request) { $0.mock = .generated(for: request, by: MockGenerator(seed: 6, arrayCount: 2)) }
            #expect(response.value.count == 2)
            #expect(response.source == .mock)
            #expect(response.source.detail == "generated Array<GenOwner> seed 6")
            #expect(response.businessCode == "0")
            #expect(response.value == (try MockGenerator(seed: 6, arrayCount: 2).value(of: [GenOwner].self)))
            #expect(server.requestCount == 0)
        }
    }

    @Test func aPolymorphicMemberGetsItsOwnHints() throws {
        for seed in UInt64(1)...12 {
            let json = try MockGenerator(seed: seed, arrayCount: 4).json(for: GenRankedFeed.self)
            let ranked = json.items?.arrayValue?.filter { $0.type?.stringValue == "ranked" } ?? []
            #expect(ranked.count == 2)
            #expect(ranked.allSatisfy { $0.rank == .int(7) && $0.caption == nil })
            if json.cover?.type?.stringValue == "ranked" {
                #expect(json.cover?.rank == .int(7))
                #expect(json.cover?.caption == nil)
            }
        }
        let covers = try (UInt64(1)...12).compactMap { try MockGenerator(seed: $0).value(of: GenRankedFeed.self).cover as? GenRankedPic }
        #expect(!covers.isEmpty)
        #expect(covers.allSatisfy { $0.rank == 7 && $0.caption == nil })
    }

    @Test func aClientWideGeneratedModeAnswersEveryEndpointFromItsOwnType() async throws {
        let server = try await LoopbackServer.start(handler: { _ in .json("[]") })
        let transport = CurlTransport()
        let generator = MockGenerator(seed: 6, arrayCount: 2)
        let client = APIClient(
            configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [MockMiddleware(.generated(by: generator))]),
            transport: transport)
        do {
            let owners = try await client.response(for: GenEnveloped())
            #expect(owners.value == (try generator.value(of: [GenOwner].self)))
            #expect(owners.source == .mock)
            #expect(owners.source.detail == "generated Array<GenOwner> seed 6")
            #expect(owners.businessCode == "0")
            let feed = try await client.response(for: GenFeedRequest())
            #expect(feed.value.items.count == 2)
            #expect(feed.source.detail == "generated GenRankedFeed seed 6")
            let expected = try generator.body(for: GenFeedRequest())
            #expect(feed.body == expected)
            // Off for one call: the network answers.
            let real = try await client.send(GenPlainOwners()) { $0.mock = .off }
            #expect(real.isEmpty)
            #expect(server.requestCount == 1)
            // A response type that is not Decodable: a typed error, nothing sent.
            let error = await #expect(throws: CurlewError.self) { try await client.send(GenOpaqueRequest()) }
            #expect(error?.code == .mockGenerationFailed)
            #expect(error?.message.contains("GenOpaqueRequest.Response (GenOpaque) is not Decodable") == true)
            #expect(server.requestCount == 1)
        } catch {
            await transport.shutdown()
            await server.shutdown()
            throw error
        }
        await transport.shutdown()
        await server.shutdown()
    }

    @Test func aPerCallGeneratedModeWorksOnAnyClient() async throws {
        try await withLoopback(handler: { _ in .json("{}") }) { server, client, _ in
            let generator = MockGenerator(seed: 3, arrayCount: 3)
            let feed = try await client.response(for: GenFeedRequest()) { $0.mock = .generated(by: generator) }
            #expect(feed.value.items.count == 3)
            #expect(feed.source == .mock)
            #expect(feed.body == (try generator.body(for: GenFeedRequest())))
            #expect(server.requestCount == 0)
        }
    }
}
