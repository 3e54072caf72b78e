import Curlew
import CurlewOpenAPI
import Foundation
import OpenAPIRuntime

// The generated-client tour: a client that swift-openapi-generator made from OpenAPI/openapi.yaml
// (generated once, committed under OpenAPI/Generated), sending through the tour's own APIClient.

/// A generated client on `CurlewTransport` (issue 26): the generated code is untouched; the
/// transport brings the client's middleware, events and per-operation policy.
struct OpenAPIStep: TourStep {
    let title = "OpenAPI: a generated client on CurlewTransport, with a policy per operation"

    func run(with client: APIClient) async throws {
        guard let base = client.configuration.baseURL, let serverURL = URL(string: base) else {
            say("the tour's client has no base URL")
            return
        }
        // Per-operation policy, keyed by the generated operation ids, in one place.
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.SearchPictures.id] = OperationPolicy(options: RequestOptions(totalTimeout: .seconds(5)))
        configuration.operations[Operations.GetPicture.id] = OperationPolicy(responseBody: .collect)
        let gallery = Client(serverURL: serverURL, transport: CurlewTransport(client: client, configuration: configuration))

        let events = client.events
        let found = try await gallery.searchPictures(query: .init(key: "sunset")).ok.body.json.data
        say("searchPictures(key: \"sunset\") → \(found.total) pictures: \(found.pictures.map(\.title).joined(separator: ", "))")
        // The call's events are named after the operation id.
        for await event in events where event.kind == .finished {
            say("client.events: .finished, requestName \"\(event.requestName ?? "-")\"")
            break
        }

        let picture = try await gallery.getPicture(path: .init(id: 5)).ok.body.json.data
        say("getPicture(id: 5) → \"\(picture.title)\" by \(picture.author)")

        // A documented status is an answer the generated code decodes, not an error.
        switch try await gallery.getPicture(path: .init(id: 99)) {
        case .notFound: say("getPicture(id: 99) → .notFound, the document's 404")
        case let other: say("getPicture(id: 99) → \(other)")
        }
    }
}
