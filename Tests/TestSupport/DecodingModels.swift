package import Curlew
package import CurlewDecoding
import CurlewTesting
package import Foundation

// The models that CurlewTests and CurlewDecodingTests both decode, and their mock clients.

/// A client whose every call is answered with `body` as JSON.
package func mockClient(_ body: String) -> APIClient {
    APIClient(baseURL: "https://api.test", transport: MockTransport { .json(body, for: $0) })
}

/// A client whose every call is answered 200 with `bytes` as the body.
package func mockClient(bytes: Data) -> APIClient {
    APIClient(baseURL: "https://api.test", transport: MockTransport { RawResponse(status: .ok, body: bytes, url: $0.url) })
}

/// GET with a key path and a response format chosen by the test.
package struct FetchAt<Value: Decodable & Sendable>: Endpoint {
    package typealias Response = Value
    package var path: String
    package var at: String?
    package var format: ResponseFormat
    package var keyPath: String? { at }
    package var responseFormat: ResponseFormat { format }

    package init(path: String = "p", at: String? = nil, format: ResponseFormat = .json) {
        self.path = path
        self.at = at
        self.format = format
    }
}

package protocol Media: Decodable, Sendable {}

package struct PicObject: Media, ValidatableModel, Equatable {
    package var picUrl: String
    package var picW: Int

    package init(picUrl: String, picW: Int) {
        self.picUrl = picUrl
        self.picW = picW
    }

    package func validate() throws {
        if picUrl.isEmpty { throw ValidationFailure("must not be empty", field: "picUrl") }
    }
}

package struct VideoObject: Media, Equatable {
    package var videoUrl: String
    package var videoW: Int

    package init(videoUrl: String, videoW: Int) {
        self.videoUrl = videoUrl
        self.videoW = videoW
    }
}

package enum SkippingMedia: PolymorphicFamily {
    package typealias Member = any Media
    package static var discriminator: String { "kind" }
    package static var members: [String: any Decodable.Type] { ["pic": PicObject.self, "1": VideoObject.self] }
    package static var skipsUnknownTypes: Bool { true }
}

package enum Kind: String, Decodable, CaseIterable, Sendable { case pic, video }
package enum Level: Int, Decodable, CaseIterable, Sendable {
    case low = 1
    case high = 2
}
package enum Untitled: DefaultValueProvider { package static let defaultValue = "Untitled" }

package struct LenientItem: Decodable, Sendable {
    @AutoCast package var id: String
    @AutoCast package var width: Int
    @AutoCast package var rating: Double? = nil
    @AutoCast package var isPublic: Bool
    @Default<Int> package var likes: Int
    @Default<[String]> package var tags: [String]
    @Default<Untitled> package var title: String
    @Scoped package var kind: Kind
}

package struct Owner: Decodable, Sendable, ValidatableModel {
    package var name: String
    package func validate() throws {
        if name.isEmpty { throw ValidationFailure("must not be empty", field: "name") }
    }
}

package struct Album: Decodable, Sendable {
    @Validated package var owner: Owner
}
