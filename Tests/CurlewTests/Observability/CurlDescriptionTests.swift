import Curlew
import Foundation
import HTTPTypes
import Testing

/// `curl` command lines for prepared requests, with every secret redacted.
@Suite("curl command lines")
struct CurlDescriptionTests {
    struct SignIn: Endpoint {
        typealias Response = String
        var method: HTTPRequest.Method { .post }
        var path: String { "session" }
        var query: [URLQueryItem] { [URLQueryItem(name: "token", value: "abc"), URLQueryItem(name: "lang", value: "en")] }
        var headers: [String: String] { ["Authorization": "Bearer xyz", "X-Api-Key": "k-123", "X-Trace": "it's"] }
        var body: RequestPayload? { .json(["user": "ann", "password": "hunter2"]) }
    }

    @Test func aPostWithSecretsBecomesARunnableRedactedCommandLine() throws {
        var options = TransferOptions()
        options.totalTimeout = .milliseconds(2500)
        let client = APIClient(
            configuration: ClientConfiguration(
                baseURL: "https://user:pw@api.example.com/v1", headers: [.userAgent: "Curlew"], transferOptions: options))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let command = try client.curlDescription(for: SignIn())
        #expect(!command.contains("hunter2"))
        #expect(!command.contains("xyz"))
        #expect(!command.contains("k-123"))
        #expect(!command.contains("pw@"))
        #expect(command.hasPrefix("curl \\\n  -X 'POST' \\\n  'https://<redacted>@api.example.com/v1/session?token=<redacted>&lang=en'"))
        #expect(command.contains("-H 'Authorization: <redacted>'"))
        #expect(command.contains("-H 'X-Api-Key: <redacted>'"))
        #expect(command.contains("-H 'X-Trace: it'\\''s'"))
        #expect(command.contains("-H 'User-Agent: Curlew'"))
        #expect(command.contains(#""password":"<redacted>""#))
        #expect(command.contains(#""user":"ann""#))
        #expect(command.hasSuffix("-H 'Accept-Encoding: gzip, deflate, br, zstd' \\\n  --compressed \\\n  --location --max-redirs 10 \\\n  --connect-timeout 10 \\\n  --max-time 2.500"))
    }

    @Test func aPlainGetHasNoMethodFlagAndABinaryBodyIsNamedNotInlined() {
        let get = PreparedRequest(method: .get, url: "http://127.0.0.1:8080/a?b=c")
        #expect(get.curlDescription == "curl \\\n  'http://127.0.0.1:8080/a?b=c' \\\n  -H 'Accept-Encoding: gzip, deflate, br, zstd' \\\n  --compressed \\\n  --location --max-redirs 10 \\\n  --connect-timeout 10 \\\n  --max-time 60")
        let upload = PreparedRequest(method: .put, url: "http://h/x", body: Data([0xFF, 0xFE, 0x00]))
        #expect(upload.curlDescription.contains("--data-binary @- \\\n"))
        #expect(upload.curlDescription.hasSuffix(" # the body: 3 bytes on standard input"))
    }

    /// `--compressed` alone asks for whatever the curl at hand was built with; the command asks for what Curlew asks
    /// for, and a request's own `Accept-Encoding` is printed once, as it is.
    @Test func theCommandAsksForTheCodingsCurlewAsksFor() {
        var own = PreparedRequest(method: .get, url: "http://h/x")
        own.headers[.acceptEncoding] = "identity"
        let command = own.curlDescription
        #expect(command.components(separatedBy: "Accept-Encoding").count == 2)
        #expect(command.contains("-H 'Accept-Encoding: identity' \\\n  --compressed"))
        var plain = PreparedRequest(method: .get, url: "http://h/x")
        plain.options.acceptsCompressedResponses = false
        #expect(!plain.curlDescription.contains("Accept-Encoding"))
        #expect(!plain.curlDescription.contains("--compressed"))
    }
}
