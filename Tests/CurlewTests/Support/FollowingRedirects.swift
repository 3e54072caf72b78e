@testable import Curlew
@testable import CurlewCore
import Foundation

/// Sends `request` over `transport` through the client's redirect step — the one place Curlew
/// follows redirects (transports never do) — without an endpoint's status check: what a client
/// call does between its outer middleware and the transport.
func followingRedirects(_ request: PreparedRequest, over transport: any Transport, context: TransportContext? = nil) async throws -> RawResponse {
    let given = context ?? .standalone(for: request)
    var middlewareContext = MiddlewareContext(
        requestID: given.requestID, requestName: given.requestName, identity: given.identity, transport: transport, events: given.events)
    middlewareContext.responseBody = given.responseBody
    return try await MiddlewareChain.compose([])(request, middlewareContext)
}
