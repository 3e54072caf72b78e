import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A POST of JSON parameters to httpbin's `/anything`, which echoes them under `json`: the
/// envelope is read from there, as a server's own envelope would be.
struct EnvelopedCall<Payload: Decodable & Sendable>: Endpoint {
    typealias Response = Payload
    var parameters: [String: ParameterValue]
    var envelope: ResponseEnvelope?
    var keyPath: String?
    var method: HTTPRequest.Method { .post }
    var path: String { "anything/enveloped" }
    var parameterEncoding: ParameterEncoding { .json }
}

/// HAccess's model validation: an id must be positive.
struct AuditPicture: Decodable, Sendable, Equatable, ValidatableModel {
    var id: Int
    func validate() throws {
        if id <= 0 { throw ValidationFailure("must be positive", field: "id") }
    }
}

struct Clover: Decodable, Sendable, Equatable {
    var name: String
    var count: Int
}

/// HAccess's `getOutputEntiy:` / `requestFinishedSucessWithInfo:` with `herr(503, msg)`, and
/// `requestFinishedFailureWithError:` counted.
struct HAccessStyleCall: Endpoint {
    typealias Response = BinEcho
    var parameters: [String: ParameterValue]
    let failures: Counter
    var method: HTTPRequest.Method { .post }
    var path: String { "anything/dao" }
    var parameterEncoding: ParameterEncoding { .json }
    func didReceive(_ response: RawResponse) throws {
        guard try response.json(at: "json.status").boolValue == true else {
            let message = try response.json(at: "json.msg").stringValue ?? "服务端错误"
            throw CurlewError.serverError(businessCode: "503", message: message)
        }
    }
    func didFail(_ error: CurlewError) { failures.add(1) }
}

/// Records an accessory's callbacks, progress included.
final class ProgressRecorder: Accessory {
    private let lines = Mutex<[String]>([])
    private let sent = Mutex<[TransferProgress]>([])
    var events: [String] { lines.withLock { $0 } }
    var progress: [TransferProgress] { sent.withLock { $0 } }

    func willStart(_ activity: Activity) { lines.withLock { $0.append("start") } }
    func didProgress(_ activity: Activity, progress: TransferProgress) {
        sent.withLock { $0.append(progress) }
        lines.withLock { if $0.last != "progress" { $0.append("progress") } }
    }
    func willStop(_ activity: Activity, outcome: Result<Void, any Error>) { lines.withLock { $0.append("willStop \(RecordingAccessory.word(outcome))") } }
    func didStop(_ activity: Activity, outcome: Result<Void, any Error>, duration: Duration) {
        lines.withLock { $0.append("didStop \(RecordingAccessory.word(outcome))") }
    }
}

/// Unified response processing (HAccess's `getOutputEntiy:`, LCNetwork's `processRule`,
/// HttpManager's c/p/n, LSBaseRequest's `requestCompleteFilter`), common arguments, URL
/// rewriting, accessories and stubs, checked against httpbin and the loopback server.
@Suite("Migration audit: envelopes, arguments, accessories, stubs", .timeLimit(.minutes(1)))
struct MigrationEnvelopeAuditTests {
    func httpbinClient(middleware: [any APIMiddleware] = []) throws -> APIClient {
        APIClient(configuration: ClientConfiguration(baseURL: try TestServers.httpbin(), middleware: middleware))
    }

    /// HAccess's "Server" error domain: `{"code":"100002","info":"系统忙，请稍候再试"}`.
    @Test func aBusinessCodeBecomesAServerErrorWithItsMessage() async throws {
        let envelope = ResponseEnvelope(codePath: "json.code", messagePath: "json.info", payloadPath: "json.data", successCodes: ["0"])
        let call = EnvelopedCall<JSONValue>(parameters: ["code": "100002", "info": "系统忙，请稍候再试"], envelope: envelope)
        let error = await #expect(throws: CurlewError.self) { try await httpbinClient().send(call) }
        #expect(error?.code == .serverError)
        #expect(error?.businessCode == "100002")
        #expect(error?.message == "系统忙，请稍候再试")
        #expect(error?.stage == .envelope)
        #expect(error?.status?.code == 200)
    }

    /// HAccess's success rule `status == true && msg == nil`, each way it can go.
    @Test func theHAccessSuccessRuleHoldsOnlyWithATrueStatusAndNoMessage() async throws {
        let client = try httpbinClient()
        let envelope = ResponseEnvelope(codePath: "json.status", messagePath: "json.msg", payloadPath: "json.data", successCodes: ["true"])
            .requiring(.absent("json.msg"))
        let withMessage = await #expect(throws: CurlewError.self) {
            try await client.send(EnvelopedCall<AuditPicture>(parameters: ["status": true, "msg": "访问权限错误"], envelope: envelope))
        }
        #expect(withMessage?.code == .serverError)
        #expect(withMessage?.businessCode == "true")
        #expect(withMessage?.message == "访问权限错误 (json.msg is absent does not hold)")
        let refused = await #expect(throws: CurlewError.self) {
            try await client.send(EnvelopedCall<AuditPicture>(parameters: ["status": false, "msg": "访问权限错误"], envelope: envelope))
        }
        #expect(refused?.code == .serverError)
        #expect(refused?.businessCode == "false")
        #expect(refused?.message == "访问权限错误")
        let picture = try await client.send(EnvelopedCall<AuditPicture>(parameters: ["status": true, "data": ["id": 3]], envelope: envelope))
        #expect(picture == AuditPicture(id: 3))
    }

    /// LCNetwork's `processRule` returning `result`, `responseProcess:` narrowing further,
    /// `rawJSONObject` still the whole body, `ignoreUnifiedResponseProcess` the raw answer.
    @Test func lcNetworkProcessingKeepsTheRawBodyBesideTheProcessedValue() async throws {
        let client = try httpbinClient()
        let envelope = ResponseEnvelope(codePath: "json.ok", messagePath: "json.message", payloadPath: "json.result", successCodes: ["true", "1"])
        let body: [String: ParameterValue] = ["ok": true, "message": "成功", "result": ["_id": "564a931d", "name": "clover", "count": 10]]
        let answer = try await client.response(for: EnvelopedCall<Clover>(parameters: body, envelope: envelope))
        #expect(answer.value == Clover(name: "clover", count: 10))
        #expect(answer.businessCode == "true")
        #expect(answer.businessMessage == "成功")
        #expect(try answer.raw.json(at: "json.ok") == .bool(true))
        #expect(try answer.raw.json(at: "json.result._id") == .string("564a931d"))
        let count = try await client.send(EnvelopedCall<Int>(parameters: body, envelope: envelope, keyPath: "count"))
        #expect(count == 10)
        let whole = try await client.send(EnvelopedCall<BinEcho>(parameters: body, envelope: nil))
        #expect(whole.json?["message"] == .string("成功"))
    }

    /// LSBaseRequest's "no code in the answer": a data-format error at the envelope stage.
    @Test func anAnswerWithoutTheEnvelopesCodeIsADataFormatError() async throws {
        struct NoEnvelope: Endpoint {
            typealias Response = JSONValue
            var path: String { "json" }
            var envelope: ResponseEnvelope? { .codeMsgData }
        }
        let error = await #expect(throws: CurlewError.self) { try await httpbinClient().send(NoEnvelope()) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.stage == .envelope)
        #expect(error?.message.hasPrefix("the body is not the expected envelope (no code at code)") == true)
    }

    /// HAccess's model validation inside an envelope's payload: the path is from the body's root.
    @Test func aModelThatFailsValidationNamesItsPathFromTheBodysRoot() async throws {
        let envelope = ResponseEnvelope(codePath: "json.code", messagePath: nil, payloadPath: "json.data", successCodes: ["0"])
        let call = EnvelopedCall<[AuditPicture]>(parameters: ["code": 0, "data": [["id": 1], ["id": 0]]], envelope: envelope)
        let error = await #expect(throws: CurlewError.self) { try await httpbinClient().send(call) }
        #expect(error?.code == .validationFailed)
        #expect(error?.dataPath == "json.data[1].id")
        #expect(error?.message == "json.data[1].id: must be positive")
    }

    /// Whatever a model's `validate()` throws — even a `CurlewError` of its own — arrives as
    /// `.validationFailed` with that error underneath, at level `.dataFormat`: a handler matching
    /// `.decodingFailed` alone (as the migration guide's example did) misses it.
    @Test func whateverValidateThrowsArrivesAsValidationFailed() async throws {
        struct Strict: Decodable, Sendable, ValidatableModel {
            var id: Int
            func validate() throws {
                if id <= 0 { throw CurlewError(code: .decodingFailed, message: "id must be positive") }
            }
        }
        let envelope = ResponseEnvelope(codePath: "json.code", messagePath: nil, payloadPath: "json.data", successCodes: ["0"])
        let call = EnvelopedCall<Strict>(parameters: ["code": 0, "data": ["id": 0]], envelope: envelope)
        let error = await #expect(throws: CurlewError.self) { try await httpbinClient().send(call) }
        #expect(error?.code == .validationFailed)
        #expect(error?.level == .dataFormat)
        #expect(error?.dataPath == "json.data")
        #expect((error?.underlying as? CurlewError)?.code == .decodingFailed)
    }

    /// HAccess's `herr(503, msg)` from `requestFinishedSucessWithInfo:`; the failure hook runs once.
    @Test func aServerErrorThrownFromDidReceiveReachesTheCallerAndDidFailOnce() async throws {
        let failures = Counter()
        let client = try httpbinClient()
        let error = await #expect(throws: CurlewError.self) {
            try await client.send(HAccessStyleCall(parameters: ["status": false, "msg": "访问权限错误"], failures: failures))
        }
        #expect(error?.code == .serverError)
        #expect(error?.businessCode == "503")
        #expect(error?.message == "访问权限错误")
        #expect(failures.indices == [1])
        let echo = try await client.send(HAccessStyleCall(parameters: ["status": true], failures: failures))
        #expect(echo.json?["status"] == .bool(true))
        #expect(failures.indices == [1])
    }

    /// LCNetwork's unified `version` argument and HttpManager's `device_id` in the URL, on a GET,
    /// a form POST and a JSON POST, replacing a value the request had.
    @Test func commonArgumentsReachHttpbinWhereTheRequestsParametersGo() async throws {
        let client = try httpbinClient(middleware: [
            CommonArgumentsMiddleware(parameters: ["version": "1.0.0"], placement: .alongsideParameters, replacesExisting: true),
            CommonArgumentsMiddleware(parameters: ["device_id": "d-1"]),
        ])
        let get = try await client.send(BinCall(path: "anything/get", parameters: ["version": "0.9", "lat": "34.3"], parameterEncoding: .query))
        #expect(get.args == ["version": "1.0.0", "lat": "34.3", "device_id": "d-1"])
        let form = try await client.send(BinCall(method: .post, path: "anything/form", parameters: ["lat": "34.3"], parameterEncoding: .form))
        #expect(form.form == ["version": "1.0.0", "lat": "34.3"])
        #expect(form.args == ["device_id": "d-1"])
        let json = try await client.send(BinCall(method: .post, path: "anything/json", parameters: ["version": "0.9"], parameterEncoding: .json))
        #expect(json.json == .object(["version": .string("1.0.0")]))
        #expect(json.args == ["device_id": "d-1"])
    }

    /// Monkey's URL filter and LCNetwork's `viceBaseUrl`: what httpbin saw.
    @Test func urlRewritingAndAPerCallBaseURLReachTheRewrittenURL() async throws {
        let base = try TestServers.httpbin()
        let client = try httpbinClient(middleware: [URLRewriteMiddleware { $0.replacingOccurrences(of: "/legacy/", with: "/anything/v2/") }])
        let rewritten = try await client.send(BinCall(path: "legacy/weather"))
        #expect(URL(string: rewritten.url)?.path == "/anything/v2/weather")
        let vice = try await client.send(BinCall(path: "weather")) { $0.baseURL = base + "/anything/vice" }
        #expect(URL(string: vice.url)?.path == "/anything/vice/weather")
    }

    /// LCNetwork's HUD accessory: one show and one hide per call, whatever ends it — success, a
    /// failure, cancellation during the exchange, in a queue or behind a hold, a hold's deadline;
    /// a call refused before it starts shows nothing.
    @Test func anAccessoryShowsAndHidesExactlyOncePerCallHoweverItEnds() async throws {
        let gates = AuditGates()
        try await withLoopback(handler: gates.handler) { server, _, transport in
            let holds = RequestHolds()
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [holds]), transport: transport)
            let ok = ["start request AuditPath", "willStop request ok", "didStop request ok"]
            let failed = ["start request AuditPath", "willStop request failed", "didStop request failed"]

            let success = RecordingAccessory()
            _ = try await client.send(AuditPath(path: "fine")) { $0.accessories = [success] }
            #expect(success.events == ok)

            let failure = RecordingAccessory()
            gates.open("x")
            await #expect(throws: CurlewError.self) { try await client.send(AuditPath(path: "fail/x")) { $0.accessories = [failure] } }
            #expect(failure.events == failed)

            let exchanging = RecordingAccessory()
            let inFlight = Task { try await client.send(AuditPath(path: "hold/y")) { $0.accessories = [exchanging] } }
            #expect(await eventually { server.inFlight(path: "/hold/y") == 1 })
            inFlight.cancel()
            await #expect(throws: CancellationError.self) { try await inFlight.value }
            #expect(exchanging.events == failed)

            let blocker = Task { try await client.send(AuditPath(path: "hold/z"), queue: "serial") }
            #expect(await eventually { server.inFlight(path: "/hold/z") == 1 })
            let queued = RecordingAccessory()
            let waiting = Task {
                try await client.send(AuditPath(path: "queued")) {
                    $0.queue = "serial"
                    $0.accessories = [queued]
                }
            }
            #expect(await eventually { await client.queues.status(of: "serial").waiting == 1 })
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            #expect(queued.events == failed)
            gates.open("z")
            _ = try await blocker.value

            _ = try await client.send(AuditPath(path: "login")) { $0.holdsLaterRequests = RequestHold(tag: "login", release: .manually) }
            let heldAccessory = RecordingAccessory()
            let held = Task { try await client.send(AuditPath(path: "held")) { $0.accessories = [heldAccessory] } }
            #expect(await eventually { holds.heldCount("login") == 1 })
            held.cancel()
            await #expect(throws: CancellationError.self) { try await held.value }
            #expect(heldAccessory.events == failed)

            let timedOut = RecordingAccessory()
            await #expect(throws: CurlewError.self) {
                try await withDeadline(in: .milliseconds(300)) { try await client.send(AuditPath(path: "late")) { $0.accessories = [timedOut] } }
            }
            #expect(timedOut.events == failed)
            holds.release("login")

            let refused = RecordingAccessory()
            await #expect(throws: CurlewError.self) {
                try await client.send(AuditPath(path: "never")) {
                    $0.queue = " "
                    $0.accessories = [refused]
                }
            }
            #expect(refused.events.isEmpty)
            #expect(server.requests(path: "/queued").isEmpty)
            #expect(server.requests(path: "/held").isEmpty)
            #expect(server.requests(path: "/late").isEmpty)
            #expect(server.requests(path: "/never").isEmpty)
        }
    }

    /// LCNetwork's `startWithBlockProgress:` through an accessory on an upload to httpbin:
    /// progress only between show and hide, never going back, ending at the body's size.
    @Test func anUploadsProgressReachesTheAccessoryBetweenShowAndHide() async throws {
        struct Upload: Endpoint {
            typealias Response = BinEcho
            var bytes: Data
            var method: HTTPRequest.Method { .post }
            var path: String { "anything/upload" }
            var body: RequestPayload? { .data(bytes, contentType: "application/octet-stream") }
        }
        let recorder = ProgressRecorder()
        let size = 300_000
        _ = try await httpbinClient().send(Upload(bytes: Data(repeating: 0x61, count: size))) { $0.accessories = [recorder] }
        #expect(recorder.events == ["start", "progress", "willStop ok", "didStop ok"])
        let sent = recorder.progress.map(\.bytesSent)
        #expect(sent == sent.sorted())
        #expect(recorder.progress.last?.bytesSent == Int64(size))
        #expect(recorder.progress.last?.totalBytesToSend == Int64(size))
    }

    /// Moya's `sampleData` stubs and HAccess's `isMock` as a test would use them: statuses,
    /// envelopes and simulated transport failures answered without any server, delays skipped
    /// with the immediate clock.
    @Test func stubsAnswerThroughTheWholePathWithoutAServer() async throws {
        let client = APIClient(configuration: ClientConfiguration(baseURL: "https://api.example.invalid"))
        struct Stubbed: Endpoint {
            typealias Response = Clover
            var path: String { "clover" }
            var envelope: ResponseEnvelope? { .okMessageResult }
        }
        let answer = try await client.response(for: Stubbed()) {
            $0.mock = MockMode.stub(MockStub(.json(#"{"ok": 1, "message": "成功", "result": {"name": "clover", "count": 2}}"#, delay: .seconds(30))))
                .clock(.immediate)
        }
        #expect(answer.value == Clover(name: "clover", count: 2))
        #expect(answer.source == .mock)
        #expect(answer.businessMessage == "成功")

        let business = await #expect(throws: CurlewError.self) {
            try await client.send(Stubbed()) { $0.mock = .stub(MockStub(.json(#"{"ok": false, "message": "余额不足"}"#))) }
        }
        #expect(business?.code == .serverError)
        #expect(business?.businessCode == "false")
        #expect(business?.message == "余额不足")

        let status = await #expect(throws: CurlewError.self) {
            try await client.send(Stubbed()) { $0.mock = .stub(MockStub(.json(#"{"error_message": "gone"}"#, status: .notFound))) }
        }
        #expect(status?.code == .unacceptableStatus)
        #expect(status?.status?.code == 404)
        struct ErrorModel: Decodable {
            var errorMessage: String
            enum CodingKeys: String, CodingKey { case errorMessage = "error_message" }
        }
        #expect(try status?.payload(ErrorModel.self).errorMessage == "gone")

        let offline = await #expect(throws: CurlewError.self) {
            try await client.send(Stubbed()) { $0.mock = .stub(MockStub(.failure(.cannotConnect))) }
        }
        #expect(offline?.code == .cannotConnect)
    }
}
