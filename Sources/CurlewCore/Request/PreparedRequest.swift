public import Foundation
public import HTTPTypes

/// A request after validation: absolute URL, merged headers, encoded body and transfer options.
///
/// The `APIClient` makes one from an `Endpoint` in a single throwing step; transports and
/// middleware receive it and never re-validate. Its properties are plain values kept behind one
/// copy-on-write reference, so it is `Sendable` and a copy costs one reference count.
public struct PreparedRequest: Sendable {
    /// The HTTP method.
    /// Setting it keeps ``summary`` in step.
    @inlinable public var method: HTTPRequest.Method {
        get { fields.value.method }
        set {
            fields.value.method = newValue
            fields.value.summary.method = newValue
        }
    }
    /// The absolute http or https URL, query included, percent-encoded.
    /// Change it with ``setURL(_:)``, which checks the new URL and keeps ``summary`` in step.
    @inlinable public var url: String { fields.value.url }
    /// All headers to send (client defaults merged with the request's).
    @inlinable public var headers: HTTPFields {
        _read { yield fields.value.headers }
        _modify { yield &fields.value.headers }
    }
    /// The body: bytes, a file or a stream; `nil` for none.
    @inlinable public var content: PreparedBody? {
        _read { yield fields.value.content }
        _modify { yield &fields.value.content }
    }
    /// The body bytes when the body is in memory; setting it replaces ``content``.
    @inlinable public var body: Data? {
        get { content?.data }
        set { content = newValue.map(PreparedBody.data) }
    }
    /// Timeouts, limits and protocol choices for this exchange.
    @inlinable public var options: TransferOptions {
        _read { yield fields.value.options }
        _modify { yield &fields.value.options }
    }
    /// The request as it may appear in errors and logs.
    @inlinable public package(set) var summary: RequestSummary {
        get { fields.value.summary }
        set { fields.value.summary = newValue }
    }

    /// Replaces the URL — a middleware moving a request to a mirror, adding a query item — and
    /// keeps ``summary`` (what errors and logs show) in step.
    /// - Throws: ``CurlewError`` `.malformedURL` unless `url` is an absolute URL with a host,
    ///   `.unsupportedScheme` unless it is http or https, or `.invalidPath` when it contains a
    ///   space or a control character (percent-encode them); the request is then unchanged.
    public mutating func setURL(_ url: String) throws(CurlewError) {
        if url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw CurlewError(code: .invalidPath, message: "a request URL may not contain a space or control character (percent-encode it)", request: summary)
        }
        let lowered = url.prefix(8).lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            let code: CurlewError.Code = url.contains("://") ? .unsupportedScheme : .malformedURL
            throw CurlewError(code: code, message: "a request URL must be an absolute http or https URL", request: summary)
        }
        let afterScheme = url.drop { $0 != "/" }.dropFirst(2)
        guard let first = afterScheme.first, first != "/", first != "?", first != "#" else {
            throw CurlewError(code: .malformedURL, message: "a request URL needs a host", request: summary)
        }
        replaceURL(url)
    }

    /// Replaces the URL without checking it (Curlew's own steps, which build URLs from a checked
    /// one) and keeps ``summary`` in step.
    /// Replaces the bytes of a body that middleware read parameters from
    /// (`PreparedBody.parameterBytes`), keeping a one-shot body one-shot.
    package mutating func replaceParameterBytes(_ bytes: Data) {
        if case .stream(let stream)? = content, stream.bytes != nil {
            content = .stream(.once(bytes: bytes))
        } else {
            content = .data(bytes)
        }
    }

    package mutating func replaceURL(_ url: String) {
        fields.value.url = url
        fields.value.summary = RequestSummary(method: method, url: url, secretKeyFragments: summary.secretKeyFragments)
    }

    /// The fields behind one reference (a request is copied into every layer it passes).
    @usableFromInline var fields: CopyOnWriteBox<Fields>

    @usableFromInline struct Fields: Sendable {
        @usableFromInline var method: HTTPRequest.Method
        @usableFromInline var url: String
        @usableFromInline var headers: HTTPFields
        @usableFromInline var content: PreparedBody?
        @usableFromInline var options: TransferOptions
        @usableFromInline var summary: RequestSummary

        @usableFromInline init(
            method: HTTPRequest.Method, url: String, headers: HTTPFields, content: PreparedBody?, options: TransferOptions,
            summary: RequestSummary
        ) {
            self.method = method
            self.url = url
            self.headers = headers
            self.content = content
            self.options = options
            self.summary = summary
        }
    }

    /// Creates a prepared request. Prefer letting the `APIClient` prepare requests; this
    /// initializer is for transports, tests and middleware that build requests themselves.
    /// The caller guarantees the URL is absolute http(s) and the headers valid.
    public init(
        method: HTTPRequest.Method,
        url: String,
        headers: HTTPFields = [:],
        body: Data? = nil,
        content: PreparedBody? = nil,
        options: TransferOptions = TransferOptions(),
        secretKeyFragments: Set<String> = RequestSummary.defaultSecretKeyFragments
    ) {
        fields = CopyOnWriteBox(
            Fields(
                method: method, url: url, headers: headers, content: content ?? body.map(PreparedBody.data), options: options,
                summary: RequestSummary(method: method, url: url, secretKeyFragments: secretKeyFragments)))
    }
}
