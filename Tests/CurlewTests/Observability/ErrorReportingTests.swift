@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// Short, redacted error descriptions and the one-line mapping to a service's own status.
@Suite("Errors in a server", .timeLimit(.minutes(2)))
struct ErrorReportingTests {
    @Test func aDescriptionEmbedsAtMost64RedactedCharactersOfALargeBodyOnOneLine() async throws {
        let body = "{\"access_token\": \"s3cr3t-value\",\n  \"detail\": \"" + String(repeating: "x", count: 2000) + "\"}"
        try await withLoopback(handler: { _ in .json(body, status: 500) }) { _, client, _ in
            let error = try await #require(throws: CurlewError.self) { try await client.send(Send(path: "boom")) }
            let description = String(describing: error)
            #expect(!description.contains("s3cr3t"))
            #expect(!description.contains("\n"))
            let excerpt = try #require(description.components(separatedBy: " body: ").last)
            #expect(excerpt == #"{"access_token": "<redacted>", "detail": "xxxxxxxxxxxxxxxxxxxxxx…"#)
            #expect(excerpt.count == CurlewError.descriptionBodyLimit + 1)
            #expect(error.bodySnippet?.count == CurlewError.bodySnippetLimit + 1, "the snippet itself keeps its 512 characters")
        }
    }

    @Test func secretsInFormAndJSONBodiesAreRedacted() {
        #expect(
            ErrorBodyExcerpt.redactSecrets(in: #"{"password":"hunter2","name":"ann","apiKey":42}"#)
                == #"{"password":"<redacted>","name":"ann","apiKey":"<redacted>"}"#)
        #expect(ErrorBodyExcerpt.redactSecrets(in: "user=ann&session_id=abc123&page=2") == "user=ann&session_id=<redacted>&page=2")
        #expect(ErrorBodyExcerpt.excerpt(of: "short  \n\n body") == "short body")
    }

    @Test func everyCodeMapsToTheStatusAServiceAnswers() {
        func status(_ code: CurlewError.Code) -> Int { CurlewError(code: code, message: "m").serverResponseStatus.code }
        #expect(status(.connectTimeout) == 504)
        #expect(status(.totalTimeout) == 504)
        #expect(status(.idleTimeout) == 504)
        #expect(status(.shutdown) == 503)
        #expect(status(.headTimeout) == 504)
        #expect(status(.deadlineExceeded) == 504)
        #expect(status(.cacheMiss) == 504)
        #expect(CurlewError(code: .cacheMiss, message: "m").serverResponseMessage == "no stored answer")
        #expect(status(.circuitOpen) == 503)
        #expect(status(.concurrencyLimitExceeded) == 503)
        #expect(status(.invalidQueueName) == 500)
        #expect(status(.invalidConnectionSettings) == 500)
        #expect(CurlewError(code: .circuitOpen, message: "m").serverResponseMessage == "upstream unavailable")
        #expect(CurlewError(code: .shutdown, message: "m").serverResponseMessage == "shutting down")
        #expect(status(.cannotConnect) == 502)
        #expect(status(.dnsFailure) == 502)
        #expect(status(.tlsFailure) == 502)
        #expect(status(.connectionReset) == 502)
        #expect(status(.unacceptableStatus) == 502)
        #expect(status(.serverError) == 502)
        #expect(status(.decodingFailed) == 502)
        #expect(status(.unauthorized) == 502)
        #expect(status(.malformedURL) == 500)
        #expect(status(.fixtureNotFound) == 500)
        #expect(CurlewError(code: .totalTimeout, message: "m").serverResponseMessage == "upstream timed out")
        #expect(CurlewError(code: .shutdown, message: "m").serverResponseMessage == "shutting down")
        #expect(CurlewError(code: .unacceptableStatus, message: "m", status: .notFound).serverResponseMessage == "upstream request failed")
    }

    @Test func anUpstream404BecomesA502NotA404() async throws {
        try await withLoopback(handler: { _ in .text("missing", status: 404) }) { _, client, _ in
            let error = try await #require(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
            #expect(error.status == .notFound)
            #expect(error.serverResponseStatus == .badGateway)
        }
    }
}
