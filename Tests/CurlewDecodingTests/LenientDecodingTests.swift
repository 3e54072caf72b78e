import Curlew
import CurlewDecoding
import CurlewTesting
import Foundation
import Testing
import TestSupport

@Suite("Lenient, polymorphic and validated decoding")
struct LenientDecodingTests {
    @Test func autoCastBoolsDefaultsAndScopes() async throws {
        let body = #"[{"id":42,"width":"800","rating":"4.5","isPublic":1,"kind":"pic"},{"id":"a7","width":640.0,"isPublic":"false","likes":null,"tags":["x"],"title":"Dunes","kind":"video"}]"#
        let items = try await mockClient(body).send(FetchAt<[LenientItem]>())
        #expect(items.count == 2)
        #expect(items[0].id == "42")
        #expect(items[0].width == 800)
        #expect(items[0].rating == 4.5)
        #expect(items[0].isPublic)
        #expect(items[0].likes == 0)
        #expect(items[0].tags == [])
        #expect(items[0].title == "Untitled")
        #expect(items[0].kind == .pic)
        #expect(items[1].id == "a7")
        #expect(items[1].width == 640)
        #expect(items[1].rating == nil)
        #expect(!items[1].isPublic)
        #expect(items[1].tags == ["x"])
        #expect(items[1].title == "Dunes")
        #expect(items[1].kind == .video)
    }

    @Test func builtInDefaultProvidersFillMissingAndNullKeys() throws {
        enum On: DefaultValueProvider { static let defaultValue = true }
        struct Flags: Decodable {
            @Default<Int> var count: Int
            @Default<Bool> var hidden: Bool
            @Default<String> var note: String
            @Default<[Int]> var ids: [Int]
            @Default<On> var visible: Bool
        }
        let missing = try JSONDecoder().decode(Flags.self, from: Data("{}".utf8))
        #expect(missing.count == 0 && missing.hidden == false && missing.note == "" && missing.ids == [] && missing.visible == true)
        let null = try JSONDecoder().decode(
            Flags.self, from: Data(#"{"count":null,"hidden":null,"note":null,"ids":null,"visible":null}"#.utf8))
        #expect(null.count == 0 && null.hidden == false && null.note == "" && null.ids == [] && null.visible == true)
        let given = try JSONDecoder().decode(
            Flags.self, from: Data(#"{"count":3,"hidden":true,"note":"n","ids":[1,2],"visible":false}"#.utf8))
        #expect(given.count == 3 && given.hidden == true && given.note == "n" && given.ids == [1, 2] && given.visible == false)
    }

    @Test func lenientFailuresSayWhereAndWhat() async {
        let base = #"{"id":"1","width":1,"isPublic":true,"kind":"pic"}"#
        func failure(_ replace: String, _ with: String) async -> CurlewError? {
            let body = "[" + base + "," + base.replacingOccurrences(of: replace, with: with) + "]"
            return await #expect(throws: CurlewError.self) { try await mockClient(body).send(FetchAt<[LenientItem]>(at: nil)) }
        }
        #expect(await failure(#""width":1"#, #""width":"wide""#)?.message == "[1].width: expected Int, found string")
        #expect(await failure(#""isPublic":true"#, #""isPublic":"maybe""#)?.message == "[1].isPublic: expected Bool, found string")
        #expect(await failure(#""kind":"pic""#, #""kind":"gif""#)?.message == #"[1].kind: expected one of pic, video, found "gif""#)
        #expect(await failure(#""id":"1""#, #""id":[1]"#)?.dataPath == "[1].id")
    }

    @Test func scopesListIntegerValuesToo() async {
        struct Leveled: Decodable, Sendable { @Scoped var level: Level }
        let error = await #expect(throws: CurlewError.self) { try await mockClient(#"{"r":{"level":7}}"#).send(FetchAt<Leveled>(at: "r")) }
        #expect(error?.message == "r.level: expected one of 1, 2, found 7")
    }

    @Test func polymorphicArraysByDiscriminator() async throws {
        let body = #"{"resp":{"code":0,"data":[{"type":"pic","picUrl":"a.jpg","picW":450},{"type":"video","videoUrl":"b.mp4","videoW":640},{"type":"album","title":"Trip","items":[{"type":"video","videoUrl":"c.mp4","videoW":320}]}]}}"#
        let feed = try await mockClient(body).send(FetchAt<PolymorphicArray<StrictMedia>>(at: "resp.data")).elements
        #expect(feed.count == 3)
        #expect(feed[0] as? PicObject == PicObject(picUrl: "a.jpg", picW: 450))
        #expect(feed[1] as? VideoObject == VideoObject(videoUrl: "b.mp4", videoW: 640))
        let album = try #require(feed[2] as? AlbumObject)
        #expect(album.title == "Trip")
        #expect(album.items.first as? VideoObject == VideoObject(videoUrl: "c.mp4", videoW: 320))
    }

    @Test func unknownTypesAreSkippedOrFailByOption() async throws {
        let body = #"[{"kind":"pic","picUrl":"a","picW":1},{"kind":"gif","url":"x"},{"kind":1,"videoUrl":"v","videoW":2}]"#
        let skipped = try await mockClient(body).send(FetchAt<PolymorphicArray<SkippingMedia>>()).elements
        #expect(skipped.count == 2)
        #expect(skipped[1] is VideoObject)

        let strict = #"{"resp":{"data":[{"type":"pic","picUrl":"a","picW":1},{"type":"album","title":"t","items":[{"type":"video","videoUrl":"v","videoW":1},{"type":"gif"}]}]}}"#
        let error = await #expect(throws: CurlewError.self) { try await mockClient(strict).send(FetchAt<PolymorphicArray<StrictMedia>>(at: "resp.data")) }
        #expect(error?.dataPath == "resp.data[1].items[1].type")
        #expect(error?.message == #"resp.data[1].items[1].type: expected one of album, pic, video, found "gif""#)

        let missing = await #expect(throws: CurlewError.self) { try await mockClient(#"[{"picUrl":"a"}]"#).send(FetchAt<PolymorphicArray<StrictMedia>>()) }
        #expect(missing?.message == "[0].type: required key is missing")
        let badMember = await #expect(throws: CurlewError.self) { try await mockClient(#"[{"type":"pic","picUrl":"a","picW":"wide"}]"#).send(FetchAt<PolymorphicArray<StrictMedia>>()) }
        #expect(badMember?.message == "[0].picW: expected Int, found string")
    }

    @Test func singlePolymorphicValues() async throws {
        struct Post: Decodable, Sendable { @Polymorphic<StrictMedia> var cover: any Media }
        let post = try await mockClient(#"{"cover":{"type":"video","videoUrl":"v","videoW":3}}"#).send(FetchAt<Post>())
        #expect(post.cover as? VideoObject == VideoObject(videoUrl: "v", videoW: 3))
    }

    @Test func validationOfPolymorphicAndNestedValuesKeepsTheFullPath() async {
        let feed = #"{"resp":{"data":[{"type":"video","videoUrl":"v","videoW":1},{"type":"pic","picUrl":"","picW":1}]}}"#
        let poly = await #expect(throws: CurlewError.self) { try await mockClient(feed).send(FetchAt<PolymorphicArray<StrictMedia>>(at: "resp.data")) }
        #expect(poly?.code == .validationFailed)
        #expect(poly?.message == "resp.data[1].picUrl: must not be empty")

        let albums = #"{"albums":[{"owner":{"name":"Ana"}},{"owner":{"name":""}}]}"#
        let nested = await #expect(throws: CurlewError.self) { try await mockClient(albums).send(FetchAt<[Album]>(at: "albums")) }
        #expect(nested?.code == .validationFailed)
        #expect(nested?.dataPath == "albums[1].owner.name")
    }
}
