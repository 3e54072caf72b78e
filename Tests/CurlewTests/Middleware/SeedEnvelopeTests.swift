import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

extension ClientEvent.Kind {
    static let seedGoHome = ClientEvent.Kind("seedGoHome")
    static let seedPromo = ClientEvent.Kind("seedPromo")
}

struct SeedItem: Decodable, Sendable, Equatable { var id: Int }
struct SeedProblem: Decodable, Sendable, Equatable { var field: String; var reason: String }

/// HttpManager's c/n/p envelope, with app events on codes.
struct SeedCNP: Endpoint {
    typealias Response = SeedItem
    var path: String
    var envelope: ResponseEnvelope? {
        ResponseEnvelope.cnp.publishing(.seedGoHome, onCode: "404").publishing(.seedPromo, onCode: "200")
    }
}

/// HAccess's rule: status == true && msg == nil.
struct SeedHAccessRule: Endpoint {
    typealias Response = SeedItem
    var path: String
    var envelope: ResponseEnvelope? {
        ResponseEnvelope(codePath: "status", messagePath: "msg", payloadPath: "data", successCodes: ["true"]).requiring(.absent("msg"))
    }
}

@Suite("Seeds: envelope")
struct SeedEnvelopeTests {
    let routes: @Sendable (ServerRequest) async -> ServerResponse = { request in
        switch request.path {
        case "/saved": .json(#"{"c": 200, "n": "Saved!", "p": {"id": 7}}"#)
        case "/gone": .json(#"{"c": 404, "n": "This page moved", "p": null}"#)
        case "/clean": .json(#"{"status": true, "data": {"id": 1}}"#)
        case "/warned": .json(#"{"status": true, "msg": "quota almost used", "data": {"id": 2}}"#)
        case "/refused": .json(#"{"status": false, "msg": "no"}"#)
        case "/signup": .json(#"{"c": 4001, "n": "Check the form", "p": {"field": "email", "reason": "taken"}}"#)
        default: .text("?", status: 404)
        }
    }

    @Test func theMessageOfASuccessReachesTheCallerAndAnEventAndCodesPublishAppEvents() async throws {
        try await withLoopback(handler: routes) { server, client, _ in
            let events = client.events
            let saved = try await client.response(for: SeedCNP(path: "saved"))
            #expect(saved.value == SeedItem(id: 7))
            #expect(saved.businessMessage == "Saved!")
            #expect(saved.businessCode == "200")
            let gone = await #expect(throws: CurlewError.self) { try await client.send(SeedCNP(path: "gone")) }
            #expect(gone?.code == .serverError)
            #expect(gone?.businessCode == "404")
            #expect(gone?.message == "This page moved")
            let seen = await seedCollect(events, kinds: [.businessMessage, .seedGoHome, .seedPromo, .finished], until: .failed)
            #expect(seen.map(\.kind) == [.businessMessage, .seedPromo, .finished, .seedGoHome, .failed])
            #expect(seen[0].reason == "Saved!")
            #expect(seen[1].reason == "business code 200")
            #expect(seen[3].reason == "business code 404")
            #expect(seen[3].error?.message == "This page moved")
            #expect(server.requestCount == 2)
        }
    }

    @Test func anAnswerFromAMiddlewarePublishesTheSameEvents() async throws {
        try await withLoopback(handler: routes) { server, client, _ in
            let events = client.events
            let stub = MockStub(.json(#"{"c": 200, "n": "From the stub", "p": {"id": 3}}"#))
            let answer = try await client.response(for: SeedCNP(path: "saved")) { $0.mock = .stub(stub) }
            #expect(answer.value == SeedItem(id: 3))
            #expect(answer.businessMessage == "From the stub")
            let gone = MockStub(.json(#"{"c": 404, "n": "moved", "p": null}"#))
            let error = await #expect(throws: CurlewError.self) { try await client.send(SeedCNP(path: "gone")) { $0.mock = .stub(gone) } }
            #expect(error?.businessCode == "404")
            let seen = await seedCollect(events, kinds: [.businessMessage, .seedGoHome, .seedPromo, .finished], until: .failed)
            #expect(seen.map(\.kind) == [.businessMessage, .seedPromo, .finished, .seedGoHome, .failed])
            #expect(seen[0].reason == "From the stub")
            #expect(server.requestCount == 0)
        }
    }

    @Test func aSuccessRuleWithTwoConditions() async throws {
        try await withLoopback(handler: routes) { server, client, _ in
            let clean = try await client.response(for: SeedHAccessRule(path: "clean"))
            #expect(clean.value == SeedItem(id: 1))
            // The envelope names a message, the body has none: no message, not an empty one.
            #expect(clean.businessMessage == nil)
            let warned = await #expect(throws: CurlewError.self) { try await client.send(SeedHAccessRule(path: "warned")) }
            #expect(warned?.code == .serverError)
            #expect(warned?.businessCode == "true")
            #expect(warned?.message == "quota almost used (msg is absent does not hold)")
            let refused = await #expect(throws: CurlewError.self) { try await client.send(SeedHAccessRule(path: "refused")) }
            #expect(refused?.businessCode == "false")
            #expect(refused?.message == "no")
            #expect(server.requestCount == 3)
        }
    }

    @Test func aTypedErrorPayloadIsDecodedFromTheEnvelope() async throws {
        try await withLoopback(handler: routes) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(SeedCNP(path: "signup")) }
            let failure = try #require(error)
            #expect(failure.businessCode == "4001")
            let value2 = try failure.payload(SeedProblem.self, at: "p")
            #expect(value2 == SeedProblem(field: "email", reason: "taken"))
            let mismatch = #expect(throws: CurlewError.self) { try failure.payload(SeedItem.self, at: "p") }
            #expect(mismatch?.code == .decodingFailed)
            #expect(mismatch?.dataPath == "p.id")
            let bare = #expect(throws: CurlewError.self) { try CurlewError(code: .serverError, message: "x").payload(SeedProblem.self) }
            #expect(bare?.code == .decodingFailed)
        }
    }
}
