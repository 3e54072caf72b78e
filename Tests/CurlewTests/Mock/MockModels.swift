import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import Synchronization

/// Search results validated on decode: a negative total is rejected.
struct MockSearchResults: Decodable, Sendable, Equatable, ValidatableModel {
    struct Picture: Decodable, Sendable, Equatable {
        var id: Int
        var url: String
    }
    var total: Int
    var pictures: [Picture]

    func validate() throws {
        if total < 0 { throw ValidationFailure("must not be negative", field: "total") }
    }
}

/// A request answered from `MockSearch*.json`.
struct MockSearch: Endpoint {
    typealias Response = MockSearchResults
    var key = "sunset"
    var path: String { "pictures/search" }
    var query: [URLQueryItem] { [URLQueryItem(name: "key", value: key)] }
}

/// The same request with mocks switched on by its type.
struct MockSearchAlwaysMocked: Endpoint {
    typealias Response = MockSearchResults
    var path: String { "pictures/search" }
    var options: RequestOptions {
        var options = RequestOptions()
        if let store = MockFixtures.store { options.mock = .fixtures(store, name: "MockSearch") }
        return options
    }
}

struct MockAlbum: Decodable, Sendable, Equatable {
    var name: String
    var count: Int
}

/// An endpoint in a `{"code", "msg", "data"}` envelope.
struct MockEnveloped: Endpoint {
    typealias Response = MockAlbum
    var path: String { "album" }
    var envelope: ResponseEnvelope? { .codeMsgData }
}

/// The bundled fixtures.
enum MockFixtures {
    static let store: FixtureStore? = try? FixtureStore(bundle: Bundle.module, subdirectory: "Fixtures")
}

/// A middleware standing in for signing: adds a header on the way in and records what it saw on
/// the way out.
final class SeeingMiddleware: APIMiddleware {
    /// The sources and statuses of the responses seen. Guarded by its mutex.
    private let seen = Mutex<[String]>([])

    var phase: MiddlewarePhase? { .signing }
    var observed: [String] { seen.withLock { $0 } }

    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        var request = request
        request.headers[HTTPField.Name("X-Signature")!] = "signed"
        do {
            let response = try await next(request, context)
            seen.withLock { $0.append("\(response.status.code) \(response.source)") }
            return response
        } catch let error as CurlewError {
            seen.withLock { $0.append("error \(error.code)") }
            throw error
        }
    }
}
