import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// A user's own credential middleware: it declares that it provides credentials.
private struct GatewayAuth: APIMiddleware {
    var capabilities: MiddlewareCapabilities { MiddlewareCapabilities(providesCredentials: true) }
    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        var signed = request
        signed.headers[.authorization] = "Gateway g1"
        return try await next(signed, context)
    }
}

/// A user's own origin router: it declares the mirror it sends to as one of the client's origins.
private struct MirrorOrigin: APIMiddleware {
    let mirror: String
    var capabilities: MiddlewareCapabilities { MiddlewareCapabilities(trustedOrigins: [mirror]) }
    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        try await next(request, context)
    }
}

/// A clock of the user's own.
private struct FixedClock: APIMiddleware {
    var capabilities: MiddlewareCapabilities {
        MiddlewareCapabilities(serverTime: { Date(timeIntervalSince1970: 1_800_000_000) })
    }
    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        try await next(request, context)
    }
}

@Suite("Middleware declare capabilities; the client asks no concrete types")
struct MiddlewareCapabilitiesTests {
    @Test func aUsersCredentialMiddlewareSatisfiesALoginRequiredCall() async throws {
        try await withLoopback(handler: { request in .text(request.header("Authorization") ?? "none") }) { server, _, transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [GatewayAuth()]), transport: transport)
            let answer = try await client.send(Send(path: "me")) { $0.requiresAuthentication = true }
            #expect(answer == "Gateway g1")
            #expect(server.requestCount == 1)
        }
    }

    @Test func aDeclaredOriginIsTrustedLikeTheBaseURL() async throws {
        let mirror = try await LoopbackServer.start { request in .text(request.header("X-Device") ?? "none") }
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let client = APIClient(
                configuration: ClientConfiguration(
                    baseURL: server.baseURL,
                    middleware: [MirrorOrigin(mirror: mirror.baseURL), CommonArgumentsMiddleware(parameters: [:], headers: ["X-Device": "d1"])]),
                transport: transport)
            let answer = try await client.send(Send(path: mirror.baseURL + "/x"))
            #expect(answer == "d1", "common arguments reach a declared origin")
        }
        await mirror.shutdown()
    }

    @Test func serverTimeComesFromTheFirstMiddlewareThatKeepsIt() {
        let client = APIClient(configuration: ClientConfiguration(baseURL: "http://127.0.0.1:9", middleware: [FixedClock()]))
        #expect(client.serverTime() == Date(timeIntervalSince1970: 1_800_000_000))
        let plain = APIClient(baseURL: "http://127.0.0.1:9")
        #expect(abs(plain.serverTime().timeIntervalSinceNow) < 60, "no clock: the local time")
        #expect(MiddlewareCapabilities.none.providesCredentials == false)
    }
}
