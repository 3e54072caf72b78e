import CurlewDecoding
import TestSupport

// The models only these tests decode (the shared ones, and the mock client, are in TestSupport).

/// A gallery item that holds media of its own: nested polymorphism.
struct AlbumObject: Media {
    var title: String
    @PolymorphicArray<StrictMedia> var items: [any Media]
}

enum StrictMedia: PolymorphicFamily {
    typealias Member = any Media
    static var members: [String: any Decodable.Type] { ["pic": PicObject.self, "video": VideoObject.self, "album": AlbumObject.self] }
}
