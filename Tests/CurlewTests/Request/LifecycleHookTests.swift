import Curlew
import CurlewDecoding
import CurlewTesting
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Records the order in which hooks run.
final class HookLog: Sendable {
    let entries = Mutex<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// Checks the envelope by hand in `decode`, the way HAccess's `getOutputEntiy` example does.
struct EnvelopeChecked: Endpoint {
    typealias Response = [Picture]
    @Query var key: String
    /// A signature computed when the value is made (`key=<key>`), sent as a query parameter.
    @Query var sign: String
    var log: HookLog

    init(key: String, log: HookLog) {
        self.key = key
        self.sign = "key=\(key)"
        self.log = log
    }

    var path: String { "search" }

    func willSend(_ request: inout PreparedRequest) throws {
        log.add("willSend \(request.url)")
        request.headers[HTTPField.Name("X-Signed")!] = "yes"
    }

    func didReceive(_ response: RawResponse) throws {
        log.add("didReceive \(response.status.code)")
    }

    func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> [Picture] {
        log.add("decode")
        let envelope = try response.json(at: "resp")
        guard envelope.code == 0 else {
            throw CurlewError.serverError(businessCode: "\(envelope.code?.intValue ?? -1)", message: envelope.msg?.stringValue ?? "server error")
        }
        return try response.decode(at: "resp.data", decoder: decoder)
    }
}

/// Rejects an envelope in `didReceive` with a plain error.
struct StatusFlagChecked: Endpoint {
    typealias Response = JSONValue
    var path: String { "flag" }
    struct Refused: Error, CustomStringConvertible { var description: String { "access denied" } }
    func didReceive(_ response: RawResponse) throws {
        if try response.json(at: "status") == false { throw Refused() }
    }
}

@Suite("Lifecycle hooks")
struct LifecycleHookTests {
    @Test func hooksRunInOrderAndSeeTheFinalRequest() async throws {
        let router = {
            var router = LoopbackRouter()
            router.on("GET", "/search") { request, _ in
                request.queryValue("key") == "bad"
                    ? .json(#"{"resp":{"code":100002,"msg":"system busy"}}"#)
                    : .json(#"{"resp":{"code":0,"data":[{"id":"1","title":"Dunes"}]}}"#)
            }
            router.on("GET", "/flag") { _, _ in .json(#"{"status":false,"msg":"denied"}"#) }
            return router
        }()
        try await withLoopback(router: router) { server, client, _ in
            let log = HookLog()
            let pictures = try await client.send(EnvelopeChecked(key: "sunset", log: log))
            #expect(pictures == [Picture(id: "1", title: "Dunes")])
            #expect(
                log.all == [
                    "willSend \(server.baseURL)/search?key=sunset&sign=key%3Dsunset",
                    "didReceive 200",
                    "decode",
                ])
            #expect(server.requests.first?.header("X-Signed") == "yes")

            let serverError = await #expect(throws: CurlewError.self) { try await client.send(EnvelopeChecked(key: "bad", log: log)) }
            #expect(serverError?.level == .server)
            #expect(serverError?.businessCode == "100002")
            #expect(serverError?.message == "system busy")
            #expect(serverError?.status == .ok)
            #expect(serverError?.request?.description.hasSuffix("/search?key=bad&sign=<redacted>") == true)

            let refused = await #expect(throws: CurlewError.self) { try await client.send(StatusFlagChecked()) }
            #expect(refused?.code == .serverError)
            #expect(refused?.message == "access denied")
            #expect(refused?.bodySnippet == #"{"status":false,"msg":"denied"}"#)
        }
    }

    @Test func aFailingWillSendHookSendsNothing() async {
        struct Failing: Endpoint {
            typealias Response = Data
            var path: String { "x" }
            struct Nope: Error {}
            func willSend(_ request: inout PreparedRequest) throws { throw Nope() }
        }
        let transport = MockTransport { .text("ok", for: $0) }
        let client = APIClient(baseURL: "https://api.test", transport: transport)
        let error = await #expect(throws: CurlewError.self) { try await client.send(Failing()) }
        #expect(error?.code == .encodingFailed)
        #expect(transport.requests.isEmpty)
    }
}

@Suite("Decoding over the wire")
struct DecodingWireTests {
    @Test func polymorphicResultsFromAnEnvelopeWithTheRawBodyKept() async throws {
        let body = #"{"resp":{"code":0,"data":[{"kind":"pic","picUrl":"a.jpg","picW":450},{"kind":"gif"},{"kind":1,"videoUrl":"b.mp4","videoW":640}]}}"#
        try await withLoopback(handler: { _ in .json(body) }) { server, client, _ in
            let response = try await client.response(for: FetchAt<PolymorphicArray<SkippingMedia>>(path: "feed", at: "resp.data"))
            #expect(response.value.elements.count == 2)
            #expect(response.value.elements[0] as? PicObject == PicObject(picUrl: "a.jpg", picW: 450))
            #expect(response.value.elements[1] as? VideoObject == VideoObject(videoUrl: "b.mp4", videoW: 640))
            #expect(response.body == Data(body.utf8))
            #expect(try response.raw.json(at: "resp.code") == 0)
            #expect(server.requests.map(\.uri) == ["/feed"])
        }
    }
}
