internal import Foundation
internal import HTTPTypes

extension APIClient {
    /// Validates a request and turns it into what the transport sends: absolute URL, merged
    /// headers, encoded body, transfer options. Nothing downstream re-validates.
    /// - Throws: ``/CurlewCore/CurlewError`` of level `.invalidRequest`: `.malformedURL`, `.unsupportedScheme`,
    ///   `.invalidPath`, `.invalidHeader`, `.invalidMethod`, `.encodingFailed`.
    ///
    /// A relative path goes under the endpoint's ``RequestOptions/baseURL`` when its
    /// ``Endpoint/options`` set one, else under the client's base URL.
    public nonisolated func prepare<R: Endpoint>(_ request: R) throws(CurlewError) -> PreparedRequest {
        try prepare(request, baseURL: request.options.baseURL)
    }

    /// ``prepare(_:)`` with the call's own ``RequestOptions/baseURL`` (`nil`: the client's).
    nonisolated func prepare<R: Endpoint>(_ request: R, baseURL: String?) throws(CurlewError) -> PreparedRequest {
        do {
            return try prepareUnstaged(request, baseURL: baseURL ?? configuration.baseURL)
        } catch {
            var error = error
            if error.stage == nil { error.stage = .prepare }
            throw error
        }
    }

    private nonisolated func prepareUnstaged<R: Endpoint>(_ request: R, baseURL: String?) throws(CurlewError) -> PreparedRequest {
        let method = request.method
        let encoded = try encodeParameters(of: request)
        let url = try RequestURLBuilder(
            baseURL: baseURL, path: encoded.path, query: request.query + encoded.query, method: method
        ).build()
        let summary = RequestSummary(method: method, url: url, secretKeyFragments: configuration.secretQueryKeyFragments)
        guard HTTPMethodValidation.isValid(method.rawValue) else {
            throw CurlewError(code: .invalidMethod, message: "the method is not a valid HTTP token", request: summary)
        }

        var headers = configuration.headers
        // The body's own content type beats the client's default headers; only the endpoint's
        // own `Content-Type` (a header or an `@Header`) beats it.
        var endpointSetsContentType = false
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) + encoded.headers {
            guard let fieldName = HTTPField.Name(name) else {
                throw CurlewError(code: .invalidHeader, message: "header name \(HeaderValidation.quoted(name)) is not a valid HTTP token", request: summary)
            }
            guard HeaderValidation.isSafeValue(value) else {
                throw CurlewError(code: .invalidHeader, message: "the value of header \(fieldName.canonicalName) contains CR, LF, NUL or another control character", request: summary)
            }
            headers[fieldName] = value
            if fieldName == .contentType { endpointSetsContentType = true }
        }

        var body: PreparedBody?
        // Body parameters join a multipart body as text fields (Transfer/MultipartForm.swift).
        let joined = encoded.body.flatMap { request.body?.joiningFormParameters($0.data, contentType: $0.contentType) }
        if let parameterBody = encoded.body, joined == nil {
            guard request.body == nil else {
                throw CurlewError(code: .encodingFailed, message: "the request has both a body and body parameters", request: summary)
            }
            body = .data(parameterBody.data)
            if !endpointSetsContentType { headers[.contentType] = parameterBody.contentType }
        } else if let requestBody = joined ?? request.body {
            do {
                let (data, contentType) = try requestBody.encoded(with: configuration.encoder)
                body = data
                if !endpointSetsContentType, let contentType {
                    // A body's own content type is a header value too: HTTPFields would quietly
                    // turn a CR or LF into a space, so it is refused like any other header's.
                    guard HeaderValidation.isSafeValue(contentType) else {
                        throw CurlewError(
                            code: .invalidHeader, message: "the body's content type contains CR, LF, NUL or another control character", request: summary)
                    }
                    headers[.contentType] = contentType
                } else if headers[.contentType] == nil {
                    headers[.contentType] = "application/octet-stream"
                }
            } catch var error as CurlewError {
                error.request = summary
                throw error
            } catch {
                throw CurlewError(code: .encodingFailed, message: "the body could not be encoded: \(error)", request: summary, underlying: error)
            }
        }

        var prepared = PreparedRequest(
            method: method, url: url, headers: headers, content: body,
            options: configuration.transferOptions, secretKeyFragments: configuration.secretQueryKeyFragments)
        do {
            try request.willSend(&prepared)
        } catch let error as CurlewError {
            throw error
        } catch {
            throw CurlewError(code: .encodingFailed, message: "willSend failed: \(error)", request: summary, underlying: error)
        }
        // The hook may have changed the URL: check it once more before it leaves.
        if prepared.url != url {
            try RequestURLBuilder.validateAbsolute(prepared.url, method: prepared.method)
            prepared.summary = RequestSummary(method: prepared.method, url: prepared.url, secretKeyFragments: configuration.secretQueryKeyFragments)
        }
        return prepared
    }
}

/// Header checks the `HTTPFields` initialisers would silently repair (they turn bad bytes into
/// spaces); Curlew rejects them instead, so nothing is sent that the caller did not write.
enum HeaderValidation {
    static func isSafeValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }
    }

    /// A name for an error message, with control characters made visible.
    static func quoted(_ name: String) -> String {
        "\"" + name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined() + "\""
    }
}

/// `HTTPRequest.Method` already refuses non-token strings; this re-checks methods built otherwise.
enum HTTPMethodValidation {
    static func isValid(_ method: String) -> Bool {
        // Contiguous bytes first: walking `String.UTF8View` goes through the view's index per byte.
        method.utf8.withContiguousStorageIfAvailable { !$0.isEmpty && $0.allSatisfy(isTokenByte) }
            ?? (!method.isEmpty && method.utf8.allSatisfy(isTokenByte))
    }

    /// RFC 9110's `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
