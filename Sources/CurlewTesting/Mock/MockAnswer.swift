public import Curlew
public import Foundation
public import HTTPTypes

/// What a mock answers with: status, headers, body, an optional delay before answering, or a
/// transport failure to simulate instead of a response.
///
/// Fixtures load into one, stubs are one, generated bodies become one; the mock then answers the
/// call through the whole request path (middleware, status and envelope checks, `didReceive`,
/// decoding, validation), as a response whose `RawResponse.source` is `ResponseSource.mock`.
///
/// ```swift
/// let empty = MockAnswer.json(#"{"total": 0, "pictures": []}"#)
/// let slow = MockAnswer.json(#"{"total": 1}"#, delay: .milliseconds(300))
/// let offline = MockAnswer.failure(.cannotConnect)
/// ```
public struct MockAnswer: Sendable {
    /// The status. Default: 200.
    public var status: HTTPResponse.Status
    /// The headers.
    public var headers: HTTPFields
    /// The body bytes.
    public var body: Data
    /// How long to wait before answering (through the mode's ``MockClock``); `nil` for at once.
    public var delay: Duration?
    /// A transport failure to throw instead of answering (after the delay), e.g. `.cannotConnect`.
    public var failure: CurlewError.Code?
    /// Names the answer in `ResponseSource.detail` (a fixture's file name, a stub's scenario).
    public var name: String?

    /// Creates an answer.
    public init(
        status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], body: Data = Data(), delay: Duration? = nil,
        failure: CurlewError.Code? = nil, name: String? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.failure = failure
        self.name = name
    }

    /// A JSON answer (`Content-Type: application/json`).
    public static func json(_ text: String, status: HTTPResponse.Status = .ok, delay: Duration? = nil) -> MockAnswer {
        MockAnswer(status: status, headers: [.contentType: "application/json"], body: Data(text.utf8), delay: delay)
    }

    /// A simulated transport failure with a transport-level code (`.cannotConnect`,
    /// `.connectTimeout`, `.connectionReset`…), thrown after `delay`.
    public static func failure(_ code: CurlewError.Code, delay: Duration? = nil) -> MockAnswer {
        MockAnswer(delay: delay, failure: code)
    }
}
