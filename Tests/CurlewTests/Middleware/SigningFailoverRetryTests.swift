@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Recomputes the seed's signature over what the server received: query items and form fields
/// except `sign`, sorted, `a=1&b=2`, followed by the secret, MD5.
func serverSideSignatureIsValid(_ request: ServerRequest, secret: String) -> Bool {
    var pairs = request.queryItems.map { ($0.name, $0.value) }
    if request.header("Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true {
        pairs += QueryString.pairs(request.bodyText, plusIsSpace: true).map { ($0.name, $0.value) }
    }
    guard let sent = pairs.first(where: { $0.0 == "sign" })?.1 ?? request.header("X-Sign") else { return false }
    let canonical = pairs.filter { $0.0 != "sign" }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    return SigningMiddleware.signature(of: canonical, secret: secret, algorithm: .md5) == sent
}

/// A server that checks every request's signature (``serverSideSignatureIsValid(_:secret:)``),
/// answers `signed` or a 403, and keeps its verdicts, guarded by the mutex.
final class SignatureVerifier: Sendable {
    let secret: String
    private let seen = Mutex<[Bool]>([])

    init(secret: String) { self.secret = secret }

    /// Each request's verdict, in order.
    var verdicts: [Bool] { seen.withLock { $0 } }

    func answer(_ request: ServerRequest) -> ServerResponse {
        let valid = serverSideSignatureIsValid(request, secret: secret)
        seen.withLock { $0.append(valid) }
        return valid ? .text("signed") : .text("bad signature", status: 403)
    }
}

struct SignedForm: Endpoint {
    typealias Response = String
    var method: HTTPRequest.Method { .post }
    var path: String { "orders" }
    var query: [URLQueryItem] { [URLQueryItem(name: "shop", value: "north side")] }
    var body: RequestPayload? { .form(["item": "tea & cake", "count": "2"]) }
}

@Suite("Signing, failover and retry")
struct SigningFailoverRetryTests {
    @Test func theServerVerifiesTheSignatureOverWhatItReceived() async throws {
        let verifier = SignatureVerifier(secret: "123456")
        try await withLoopback(handler: { verifier.answer($0) }) { server, _, transport in
            let signing = SigningMiddleware(secret: "123456", algorithm: .md5, output: .parameter("sign"), timestampParameter: "ts")
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [signing]), transport: transport)
            let answer1 = try await client.send(SignedForm())
            #expect(answer1 == "signed")
            let answer2 = try await client.send(Send(path: "list", query: [URLQueryItem(name: "b", value: "2"), URLQueryItem(name: "a", value: "1")]))
            #expect(answer2 == "signed")
            let seen = server.requests
            #expect(seen[0].queryValue("ts") != nil)
            #expect(seen[0].queryValue("sign")?.count == 32)
            #expect(verifier.verdicts == [true, true])
        }
    }

    /// With `placement: .alongsideParameters` the timestamp, the nonce and the signature go into a
    /// form body beside the request's own fields (nothing added to the query), and the server
    /// verifies the signature over what it received; a request without a body keeps them in
    /// the query. The server clock's timestamp follows its own placement the same way.
    @Test func signingAndTheServerClockPlaceTheirParametersBesideTheBodyParameters() async throws {
        let verifier = SignatureVerifier(secret: "123456")
        try await withLoopback(handler: { verifier.answer($0) }) { server, _, transport in
            let middleware: [any APIMiddleware] = [
                ServerClock(timestampParameter: "time", placement: .alongsideParameters),
                SigningMiddleware(secret: "123456", timestampParameter: "ts", nonceParameter: "nonce", placement: .alongsideParameters),
            ]
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
            let formAnswer = try await client.send(SignedForm())
            #expect(formAnswer == "signed")
            let getAnswer = try await client.send(Send(path: "list", query: [URLQueryItem(name: "a", value: "1")]))
            #expect(getAnswer == "signed")
            let seen = server.requests
            #expect(seen[0].uri == "/orders?shop=north%20side")
            let fields = Dictionary(QueryString.pairs(seen[0].bodyText, plusIsSpace: true).map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            #expect(Set(fields.keys) == ["item", "count", "time", "ts", "nonce", "sign"])
            #expect(fields["sign"]?.count == 32)
            #expect(Set(seen[1].queryItems.map(\.name)) == ["a", "time", "ts", "nonce", "sign"])
            #expect(seen[1].bodyText.isEmpty)
            #expect(verifier.verdicts == [true, true])
        }
    }

    /// A form that has its own `ts` and `nonce` fields: beside the parameters, the signing
    /// middleware's replace them, and the signature covers the values sent (it covered the
    /// replaced ones too, and the server refused it).
    @Test func aReplacedFormFieldIsNotSigned() async throws {
        struct StampedForm: Endpoint {
            typealias Response = String
            var method: HTTPRequest.Method { .post }
            var path: String { "orders" }
            var body: RequestPayload? { .form(["item": "tea", "ts": "1", "nonce": "mine"]) }
        }
        let verifier = SignatureVerifier(secret: "123456")
        try await withLoopback(handler: { verifier.answer($0) }) { server, _, transport in
            let signing = SigningMiddleware(secret: "123456", timestampParameter: "ts", nonceParameter: "nonce", placement: .alongsideParameters)
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [signing]), transport: transport)
            let answer = try await client.send(StampedForm())
            #expect(answer == "signed")
            let fields = QueryString.pairs(server.requests[0].bodyText, plusIsSpace: true)
            #expect(fields.map(\.name).sorted() == ["item", "nonce", "sign", "ts"])
            #expect(fields.first { $0.name == "ts" }?.value != "1")
            #expect(fields.first { $0.name == "nonce" }?.value != "mine")
            #expect(verifier.verdicts == [true])
        }
    }

    /// A form with its own `sign` field: beside the parameters, the signature replaces it, and
    /// the signature does not cover the replaced value (the server never sees it).
    @Test func aFormFieldNamedLikeTheSignatureIsReplacedAndNotSigned() async throws {
        struct PresignedForm: Endpoint {
            typealias Response = String
            var method: HTTPRequest.Method { .post }
            var path: String { "orders" }
            var body: RequestPayload? { .form(["item": "tea", "sign": "stale"]) }
        }
        let verifier = SignatureVerifier(secret: "123456")
        try await withLoopback(handler: { verifier.answer($0) }) { server, _, transport in
            let signing = SigningMiddleware(secret: "123456", timestampParameter: "ts", placement: .alongsideParameters)
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [signing]), transport: transport)
            let answer = try await client.send(PresignedForm())
            #expect(answer == "signed")
            let fields = QueryString.pairs(server.requests[0].bodyText, plusIsSpace: true)
            #expect(fields.map(\.name).sorted() == ["item", "sign", "ts"])
            #expect(fields.first { $0.name == "sign" }?.value.count == 32)
            #expect(verifier.verdicts == [true])
        }
    }

    @Test func aRetryRecomputesTheSignature() async throws {
        let attempts = Mutex(0)
        try await withLoopback(handler: { request in
            guard serverSideSignatureIsValid(request, secret: "s3") else { return .text("bad", status: 403) }
            let attempt = attempts.withLock {
                $0 += 1; return $0
            }
            return attempt == 1 ? .text("busy", status: 503) : .text("ok")
        }) { server, _, transport in
            let middleware: [any APIMiddleware] = [
                RetryMiddleware(baseDelay: .milliseconds(1)),
                SigningMiddleware(secret: "s3", nonceParameter: "nonce"),
            ]
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
            let answer3 = try await client.send(Send(path: "x"))
            #expect(answer3 == "ok")
            let seen = server.requests
            #expect(seen.count == 2)
            #expect(seen[0].queryValue("nonce") != seen[1].queryValue("nonce"))
            #expect(seen[0].queryValue("sign") != seen[1].queryValue("sign"))
        }
    }

    @Test func hmacSignaturesInAHeaderAreNotSentToAnotherOrigin() async throws {
        let other = try await LoopbackServer.start { _ in .text("landed") }
        let target = other.baseURL + "/elsewhere"
        try await withLoopback(handler: { request in
            request.path == "/start" ? .redirect(to: target) : .text("same origin")
        }) { server, _, transport in
            let signing = SigningMiddleware(secret: "k", algorithm: .hmacSHA256, output: .header(HTTPField.Name("X-Sign")!))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [signing]), transport: transport)
            let answer4 = try await client.send(Send(path: "start", headers: ["X-Keep": "yes", "Authorization": "Bearer t"]))
            #expect(answer4 == "landed")
            let first = try #require(server.requests.first)
            let expected = SigningMiddleware.signature(of: "", secret: "k", algorithm: .hmacSHA256)
            #expect(first.header("X-Sign") == expected)
            #expect(expected.count == 64)
            let landed = try #require(other.requests.first)
            #expect(landed.header("X-Sign") == nil)
            #expect(landed.header("Authorization") == nil)
            #expect(landed.header("X-Keep") == "yes")
        }
        await other.shutdown()
    }

    /// A one-shot body is read by the attempt whose origin cannot be reached: it is not sent to
    /// the next origin (which would get a torn or empty body), the call fails with the connect
    /// error, and the next call goes to the origin that answers.
    @Test func aOneShotBodyIsNotFailedOverButTheNextCallIs() async throws {
        let closedURL = refusingBaseURL
        try await withLoopback(handler: { request in .text("got \(request.body.count)") }) { secondary, _, transport in
            let failover = FailoverMiddleware(baseURLs: [closedURL, secondary.baseURL])
            let client = APIClient(configuration: ClientConfiguration(baseURL: closedURL, middleware: [failover]), transport: transport)
            let stream = RequestBodyStream.once(
                length: 7,
                AsyncThrowingStream<Data, any Error> {
                    $0.yield(Data("payload".utf8)); $0.finish()
                })
            let error = await #expect(throws: CurlewError.self) { try await client.send(Upload(path: "up", body: .stream(stream))) }
            #expect(error?.code == .cannotConnect)
            #expect(secondary.requests.isEmpty)
            let replayable = try await client.send(Upload(path: "up", body: .data(Data("payload".utf8))))
            #expect(String(decoding: replayable, as: UTF8.self) == "got 7")
            #expect(secondary.requests.map(\.path) == ["/up"])
        }
    }

    @Test func failoverMovesOnOnlyWhenThePrimaryCannotBeReached() async throws {
        let closedURL = refusingBaseURL
        try await withLoopback(handler: { _ in .text("secondary") }) { secondary, _, transport in
            let failover = FailoverMiddleware(baseURLs: [closedURL, secondary.baseURL])
            let client = APIClient(configuration: ClientConfiguration(baseURL: closedURL, middleware: [failover]), transport: transport)
            let answer5 = try await client.send(Send(path: "x"))
            #expect(answer5 == "secondary")
            let answer6 = try await client.send(Send(path: "y"))
            #expect(answer6 == "secondary")
            #expect(secondary.requests.map(\.path) == ["/x", "/y"])
            #expect(failover.currentBaseURL == secondary.baseURL)
        }

        let backup = try await LoopbackServer.start { _ in .text("backup") }
        try await withLoopback(handler: { _ in .text("broken", status: 500) }) { primary, _, transport in
            let failover = FailoverMiddleware(baseURLs: [primary.baseURL, backup.baseURL])
            let client = APIClient(configuration: ClientConfiguration(baseURL: primary.baseURL, middleware: [failover]), transport: transport)
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
            #expect(error?.status?.code == 500)
            #expect(backup.requestCount == 0)
        }
        await backup.shutdown()
    }

    @Test func failoverRewritesOnlyURLsUnderABaseURLNotURLsThatMerelyStartWithIt() async throws {
        try await withLoopback(handler: { _ in .text("secondary") }) { secondary, _, transport in
            let primary = refusingBaseURL + "/api"
            let failover = FailoverMiddleware(baseURLs: [primary, secondary.baseURL + "/api"])
            let client = APIClient(configuration: ClientConfiguration(baseURL: primary, middleware: [failover]), transport: transport)
            // `/apiary` starts with the base URL's characters but is not under it: not failed over.
            let outside = await #expect(throws: CurlewError.self) { try await client.send(Send(path: primary + "ary/x")) }
            #expect(outside?.code == .cannotConnect)
            #expect(secondary.requestCount == 0)
            // Under it (a path, a query, the base itself): failed over, the rest kept.
            let underPath = try await client.send(Send(path: "hives/1"))
            let withQuery = try await client.send(Send(path: primary + "?q=1"))
            #expect(underPath == "secondary")
            #expect(withQuery == "secondary")
            #expect(secondary.requests.map(\.path) == ["/api/hives/1", "/api"])
            #expect(secondary.requests.last?.queryValue("q") == "1")
        }
    }

    @Test func retryAfterIsHonouredAndPostIsNotRetried() async throws {
        let arrivals = Mutex<[ContinuousClock.Instant]>([])
        try await withLoopback(handler: { request in
            let count = arrivals.withLock {
                $0.append(.now); return $0.count
            }
            if request.method == "POST" { return .text("busy", status: 503) }
            return count == 1 ? ServerResponse(status: 429, headers: [(name: "Retry-After", value: "1")], body: Array("slow down".utf8)) : .text("ok")
        }) { server, _, transport in
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [RetryMiddleware(baseDelay: .milliseconds(1))]),
                transport: transport)
            let answer7 = try await client.send(Send(path: "x"))
            #expect(answer7 == "ok")
            let times = arrivals.withLock { $0 }
            #expect(times.count == 2)
            #expect(times[1] - times[0] >= .milliseconds(950), "the second attempt waited for Retry-After: 1")

            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(method: .post, path: "y", body: .text("z"))) }
            #expect(error?.status?.code == 503)
            #expect(server.requests(path: "/y").count == 1)
        }
    }

    /// A `POST` is resent only with an `Idempotency-Key`: its own, or one the middleware adds
    /// when asked; every attempt carries the same key and the same body.
    @Test func aPostIsRetriedOnlyWithAnIdempotencyKey() async throws {
        let seen = Mutex<[String: Int]>([:])
        try await withLoopback(handler: { request in
            let count = seen.withLock {
                $0[request.path, default: 0] += 1; return $0[request.path, default: 0]
            }
            return count == 1 ? .text("busy", status: 503) : .text("done")
        }) { server, _, transport in
            let plain = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [RetryMiddleware(baseDelay: .milliseconds(1))]),
                transport: transport)
            let keyed = Send(method: .post, path: "keyed", headers: ["Idempotency-Key": "order-17"], body: .text("pay 17"))
            let keyedAnswer = try await plain.send(keyed)
            #expect(keyedAnswer == "done")
            let keyedRequests = server.requests(path: "/keyed")
            #expect(keyedRequests.count == 2)
            #expect(keyedRequests.map { $0.header("idempotency-key") } == ["order-17", "order-17"])
            #expect(keyedRequests.map(\.bodyText) == ["pay 17", "pay 17"])

            let error = await #expect(throws: CurlewError.self) { try await plain.send(Send(method: .post, path: "unkeyed", body: .text("z"))) }
            #expect(error?.status?.code == 503)
            #expect(server.requests(path: "/unkeyed").count == 1)
            #expect(server.requests(path: "/unkeyed").first?.header("idempotency-key") == nil)

            let adding = APIClient(
                configuration: ClientConfiguration(
                    baseURL: server.baseURL, middleware: [RetryMiddleware(baseDelay: .milliseconds(1), addsIdempotencyKey: true)]),
                transport: transport)
            let addedAnswer = try await adding.send(Send(method: .patch, path: "added", body: .text("p")))
            #expect(addedAnswer == "done")
            let added = server.requests(path: "/added").map { $0.header("idempotency-key") }
            #expect(added.count == 2)
            #expect(added[0] != nil && added[0] == added[1])
            #expect(UUID(uuidString: added[0] ?? "") != nil)
            // A GET needs no key and gets none.
            let getAnswer = try await adding.send(Send(path: "get"))
            #expect(getAnswer == "done")
            #expect(server.requests(path: "/get").map { $0.header("idempotency-key") } == [nil, nil])
        }
    }

    @Test func retryStopsAtTheAttemptBound() async throws {
        try await withLoopback(handler: { _ in .text("down", status: 503) }) { server, _, transport in
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [RetryMiddleware(maximumAttempts: 4, baseDelay: .milliseconds(1), maximumTotalTime: .seconds(3_600))]),
                transport: transport)
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
            #expect(error?.status?.code == 503)
            #expect(server.requestCount == 4)
        }
    }

    @Test func retryAfterParsesSecondsAndHTTPDates() {
        #expect(RetryMiddleware.retryAfterSeconds("120") == 120)
        #expect(RetryMiddleware.retryAfterSeconds("Sun, 06 Nov 1994 08:49:37 GMT") == 0)
        // A whole second, 30 s ahead: the date parses back to exactly it, and the delay is what
        // is left of it (a loaded machine may take a while between the two clock reads).
        let target = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 30).rounded(.down))
        let text = Self.httpDate(target)
        #expect(ServerClock.parseHTTPDate(text) == target)
        let future = RetryMiddleware.retryAfterSeconds(text) ?? 0
        #expect(future > 0 && future <= 30)
        #expect(RetryMiddleware.retryAfterSeconds("soon") == nil)
    }

    /// RFC 9110 §5.6.7: a recipient accepts all three HTTP date forms — IMF-fixdate, RFC 850
    /// (a two-digit year more than 50 years ahead is the last century's) and asctime.
    @Test func allThreeHTTPDateFormsParse() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(ServerClock.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(ServerClock.parseHTTPDate("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(ServerClock.parseHTTPDate("Sun Nov  6 08:49:37 1994") == expected)
        #expect(ServerClock.parseHTTPDate("Thursday, 06-Nov-25 08:49:37 GMT")?.timeIntervalSince1970 == 1_762_418_977)
        #expect(ServerClock.parseHTTPDate("Sunday, 06-Nov-1994 08:49:37 GMT") == nil)
        #expect(ServerClock.parseHTTPDate("Sun Nov 6 08:49:37") == nil)
    }

    /// A `Retry-After` date counts from the answer's `Date`: a server whose clock is an hour
    /// ahead of this machine's, asking for two minutes, gets two minutes.
    @Test func aRetryAfterDateCountsFromTheAnswersDate() {
        let serverNow = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 3_600).rounded(.down))
        let retryAt = serverNow.addingTimeInterval(120)
        #expect(RetryMiddleware.retryAfterSeconds(Self.httpDate(retryAt), answeredAt: serverNow) == 120)
        let retry = RetryMiddleware(maximumDelay: .seconds(600))
        #expect(retry.delay(after: 1, retryAfter: Self.httpDate(retryAt), date: Self.httpDate(serverNow)) == .seconds(120))
        #expect(retry.delay(after: 1, retryAfter: "Sunday, 06-Nov-94 08:49:37 GMT") == .zero, "a past date in the RFC 850 form: at once")
    }

    @Test func anyRetryAfterAServerSendsIsCappedWithoutTrapping() {
        let retry = RetryMiddleware(maximumDelay: .seconds(10))
        for huge in ["99999999999999999999", "9223372036854775807", "Fri, 31 Dec 9999 23:59:59 GMT"] {
            #expect(retry.delay(after: 1, retryAfter: huge) == .seconds(10), "\(huge)")
        }
        #expect(retry.delay(after: 1, retryAfter: "3") == .seconds(3))
        // Not delta-seconds (RFC 9110 §10.2.3): ignored, so the back-off decides.
        for bad in ["inf", "nan", "1e400", "-5", "+5", "1.5", ""] {
            #expect(RetryMiddleware.retryAfterSeconds(bad) == nil, "\(bad)")
        }
        #expect(ServerClock.parseHTTPDate("Sun, 06 Nov 99999999999999999 08:49:37 GMT") == nil)
        #expect(ServerClock.parseHTTPDate("Sun, 06 Nov 10000 08:49:37 GMT") == nil)
        #expect(ServerClock.parseHTTPDate("Fri, 31 Dec 9999 23:59:59 GMT")?.timeIntervalSince1970 == 253_402_300_799)
    }

    @Test func anEnvelopeTimeOutOfRangeIsIgnoredAndTheTimestampStaysAnInteger() async throws {
        let times = Mutex(["1e300", "-1", "1700000000", "1700000000"])
        try await withLoopback(handler: { _ in
            .text(#"{"time":\#(times.withLock { $0.removeFirst() })}"#)
        }) { server, _, transport in
            let clock = ServerClock(timestampParameter: "ts", envelopeTimePath: "time")
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [clock]), transport: transport)
            _ = try await client.send(Send(path: "a"))
            _ = try await client.send(Send(path: "b"))
            #expect(clock.currentOffset == nil)
            _ = try await client.send(Send(path: "c"))
            let offset = try #require(clock.currentOffset)
            #expect(abs(offset - (1_700_000_000 - Date().timeIntervalSince1970)) < 60)
            _ = try await client.send(Send(path: "d"))  // stamped with the learned time
            #expect(server.requests.last?.queryValue("ts").flatMap(Int.init).map { abs($0 - 1_700_000_000) < 60 } == true)
        }
    }

    @Test func httpDatesParseExactly() {
        #expect(ServerClock.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT")?.timeIntervalSince1970 == 784_111_777)
        #expect(ServerClock.parseHTTPDate("Thu, 01 Jan 1970 00:00:00 GMT")?.timeIntervalSince1970 == 0)
        #expect(ServerClock.parseHTTPDate("Tue, 29 Feb 2028 23:59:59 GMT")?.timeIntervalSince1970 == 1_835_481_599)
        // The obsolete RFC 850 form is read too (RFC 9110 §5.6.7; see allThreeHTTPDateFormsParse).
        #expect(ServerClock.parseHTTPDate("Sunday, 06-Nov-94 08:49:37 GMT")?.timeIntervalSince1970 == 784_111_777)
        #expect(ServerClock.parseHTTPDate("Sun, 06 Nov 1994 25:49:37 GMT") == nil)
        for offset in stride(from: 0.0, to: 4e9, by: 123_456_789) {
            let date = Date(timeIntervalSince1970: offset.rounded())
            #expect(ServerClock.parseHTTPDate(Self.httpDate(date)) == date)
        }
    }

    @Test func serverClockLearnsTheOffsetAndStampsRequests() async throws {
        // The Date header is written when the server answers (an hour ahead), not when the test
        // starts: a busy machine may take seconds to start the server.
        try await withLoopback(handler: { _ in
            ServerResponse(status: 200, headers: [(name: "Date", value: Self.httpDate(Date().addingTimeInterval(3_600)))], body: Array("ok".utf8))
        }) { server, _, transport in
            let clock = ServerClock(timestampParameter: "ts")
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [clock]), transport: transport)
            // Bounds from instants taken around each step, not a fixed tolerance: a machine slowed
            // down by a sanitizer may take seconds between the server's Date and the client's
            // reading of it. The header has whole seconds (hence the 1 s margins).
            let beforeA = Date()
            _ = try await client.send(Send(path: "a"))
            let afterA = Date()
            let offset = try #require(clock.currentOffset)
            #expect(offset <= 3_600 + 1 && offset >= 3_600 - afterA.timeIntervalSince(beforeA) - 1, "offset \(offset)")
            let beforeB = Date()
            _ = try await client.send(Send(path: "b"))
            let afterB = Date()
            // B's answer taught the clock again: its offset may differ from A's by the whole-second
            // rounding and by however long B's answer took to arrive on a loaded machine.
            let offsetB = try #require(clock.currentOffset)
            #expect(offsetB <= 3_600 + 1 && offsetB >= 3_600 - afterB.timeIntervalSince(beforeB) - 1, "offset \(offsetB)")
            let now = client.serverTime().timeIntervalSince1970
            let after = Date().timeIntervalSince1970
            #expect(now >= afterB.timeIntervalSince1970 + offsetB - 0.001 && now <= after + offsetB + 0.001, "server time \(now)")
            let stamped = server.requests.compactMap { $0.queryValue("ts").flatMap(Double.init) }
            #expect(stamped.count == 2)
            if stamped.count == 2 {
                #expect(stamped[1] >= beforeB.timeIntervalSince1970 + offset - 1 && stamped[1] <= afterB.timeIntervalSince1970 + offset + 1)
            }
        }
    }

    @Test func urlRewriteSendsElsewhereAndRejectsOtherSchemes() async throws {
        try await withLoopback(handler: { request in .text(request.path) }) { server, _, transport in
            let rewrite = URLRewriteMiddleware { $0.replacingOccurrences(of: "/images/", with: "/cdn/images/") }
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [rewrite]), transport: transport)
            let answer8 = try await client.send(Send(path: "images/1.jpg"))
            #expect(answer8 == "/cdn/images/1.jpg")
            let bad = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [URLRewriteMiddleware { _ in "file:///etc/passwd" }]), transport: transport)
            let error = await #expect(throws: CurlewError.self) { try await bad.send(Send(path: "x")) }
            #expect(error?.code == .unsupportedScheme)
            #expect(server.requestCount == 1)
        }
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
