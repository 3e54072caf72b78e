import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Testing

/// No rendering of a Curlew value — description, debugDescription, dump, String(reflecting:),
/// interpolation — shows a credential, a signature, a secret query value or user-info.
@Suite("Secrets in every rendering")
struct SecretRenderingTests {
    static let canaryURL = "https://alice:CANARY-PW@api.example.com/v1/items?api_key=CANARY-K&password=CANARY-P&access_token=CANARY-T&sign=CANARY-S&page=2"

    static let allCodes: [CurlewError.Code] = [
        .cannotConnect, .dnsFailure, .tlsFailure, .connectTimeout, .totalTimeout, .idleTimeout, .connectionReset, .emptyReply,
        .tooManyRedirects, .redirectRefused, .bodyTooLarge, .shutdown, .transportFailure, .unacceptableStatus, .serverError,
        .decodingFailed, .validationFailed, .unauthorized, .notLoggedIn, .sessionEnded, .refreshFailed, .cancelled,
        .malformedURL, .unsupportedScheme, .invalidHeader, .invalidMethod, .invalidPath, .encodingFailed, .fileUnreadable,
        .fileNotWritable, .bodyStreamFailed, .missingCredentialSource, .middlewareFailed, .fixtureNotFound,
        .fixturePathRejected, .fixtureInvalid, .mockGenerationFailed, .cacheMiss, .destinationExists,
        .unexpectedContentType, .rangeMismatch, .resourceChanged, .downloadIncomplete, .protocolError,
        .connectionClosedBeforeResponse, .insecureRedirect, .deadlineExceeded, .circuitOpen, .headTimeout,
        .concurrencyLimitExceeded, .invalidConnectionSettings, .invalidQueueName,
    ]

    /// Every way a value can be turned into text.
    static func renderings(of value: Any) -> [String: String] {
        var dumped = ""
        dump(value, to: &dumped)
        var dumpedDeep = ""
        dump(value, to: &dumpedDeep, maxDepth: 20)
        return [
            "describing": String(describing: value),
            "reflecting": String(reflecting: value),
            "interpolation": "\(value)",
            "dump": dumped,
            "dumpDeep": dumpedDeep,
            "mirror": Mirror(reflecting: value).children.map { "\($0.label ?? ""): \($0.value)" }.joined(separator: "\n"),
        ]
    }

    static func expectClean(_ value: Any, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for (kind, text) in renderings(of: value) {
            #expect(!text.contains("CANARY"), "\(context) leaks through \(kind): \(text)", sourceLocation: sourceLocation)
        }
    }

    struct Wrapped: Error {
        var secret = "CANARY-UNDERLYING"
    }

    @Test func everyErrorKindIsCleanInEveryRendering() {
        var headers = HTTPFields()
        headers[.setCookie] = "session=CANARY-SC"
        headers[.authorization] = "Bearer CANARY-AUTH"
        for code in Self.allCodes {
            var error = CurlewError(
                code: code, message: "failed", request: RequestSummary(method: .post, url: Self.canaryURL),
                status: .unauthorized, headers: headers, bodySnippet: "nothing here", underlying: Wrapped())
            error.responseBody = Data("token=CANARY-BODY".utf8)
            Self.expectClean(error, "\(code)")
            var nested = error
            nested.underlying = error
            Self.expectClean(nested, "\(code) wrapping itself")
            #expect(String(describing: error).contains("api_key=<redacted>"), "still useful: the URL is there, redacted")
        }
    }

    @Test func requestValuesAreClean() {
        var request = PreparedRequest(method: .post, url: Self.canaryURL, body: Data("password=CANARY-BODY".utf8))
        request.headers[.authorization] = "Bearer CANARY-AUTH"
        request.headers[.cookie] = "s=CANARY-COOKIE"
        Self.expectClean(request, "PreparedRequest")
        Self.expectClean(request.summary, "RequestSummary")
        Self.expectClean(
            RawResponse(status: .ok, headers: [.setCookie: "s=CANARY-SC"], content: .data(Data()), url: Self.canaryURL, source: .network),
            "RawResponse")
        Self.expectClean(TokenStore.Credential(accessToken: "CANARY-AT", refreshToken: "CANARY-RT"), "Credential")
        Self.expectClean(SigningMiddleware(secret: "CANARY-SECRET", output: .parameter("sign")), "SigningMiddleware")
    }

    @Test func errorsFromRealFailuresAreClean() async throws {
        var failures: [CurlewError] = []
        // Refused connection, protocol error, lost connection, status error, refused redirect.
        let closed = try ClosedPort()
        let closedURL = closed.baseURL
        let scripted = try ScriptedServer { index, _ in
            switch index {
            case 0: .raw("garbage\r\n\r\n")
            case 1: .ok()
            case 2: .closeWithoutAnswer
            case 3: .raw("HTTP/1.1 401 No\r\nSet-Cookie: s=CANARY-SC\r\nWWW-Authenticate: Bearer CANARY-W\r\nContent-Length: 0\r\n\r\n")
            default: .raw("HTTP/1.1 302 Moved\r\nLocation: ftp://alice:CANARY-PW@example.com/?token=CANARY-T\r\nContent-Length: 0\r\n\r\n")
            }
        }
        defer { scripted.stop() }
        let secretQuery = "?api_key=CANARY-K&access_token=CANARY-T"
        try await withTransport { transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: scripted.baseURL, transferOptions: http1Options()), transport: transport)
            let calls: [@Sendable () async throws -> Void] = [
                { _ = try await transport.send(PreparedRequest(method: .get, url: closedURL.replacingOccurrences(of: "http://", with: "http://alice:CANARY-PW@") + "/x" + secretQuery)) },
                { _ = try await client.send(FetchText(path: "a" + secretQuery)) },
                { _ = try await client.send(FetchText(path: "b" + secretQuery)) },
                { _ = try await client.send(HardeningPost(path: "c" + secretQuery)) },
                { _ = try await client.send(FetchText(path: "d" + secretQuery)) },
                { _ = try await client.send(FetchText(path: "e" + secretQuery)) },
                { _ = try await client.send(FetchText(path: "{f}" + secretQuery)) },
            ]
            for call in calls {
                do { try await call() } catch let error as CurlewError { failures.append(error) }
            }
        }
        withExtendedLifetime(closed) {}
        #expect(
            failures.map(\.code) == [
                .cannotConnect, .protocolError, .connectionClosedBeforeResponse, .unacceptableStatus, .redirectRefused, .invalidPath,
            ])
        for failure in failures { Self.expectClean(failure, "real \(failure.code)") }
    }
}
