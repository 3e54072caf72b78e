public import Curlew
public import Foundation
import HTTPTypes

extension PreparedRequest {
    /// The URL's path, percent-decoded: `/pictures/search`.
    public var path: String {
        URLComponents(string: url)?.path ?? ""
    }

    /// The URL's query items by name (the last value wins), percent-decoded.
    public var queryValues: [String: String] {
        var values: [String: String] = [:]
        for item in URLComponents(string: url)?.queryItems ?? [] { values[item.name] = item.value ?? "" }
        return values
    }

    /// The value of a header, `nil` when absent.
    public func header(_ name: String) -> String? {
        guard let field = HTTPField.Name(name) else { return nil }
        return headers[field]
    }

    /// The body as JSON, `nil` when there is none or it is not JSON.
    public var jsonBody: JSONValue? {
        guard let body, !body.isEmpty else { return nil }
        return try? JSONValue(jsonData: body)
    }

    /// The body decoded as `T`.
    /// - Throws: `DecodingError`, or a `CurlewError` when there is no body.
    public func decodedBody<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        guard let body else { throw CurlewError(code: .decodingFailed, message: "the request has no body") }
        return try decoder.decode(T.self, from: body)
    }

    /// The body's form fields (`application/x-www-form-urlencoded`), percent-decoded.
    public var formValues: [String: String] {
        guard let body, let text = String(data: body, encoding: .utf8) else { return [:] }
        var values: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ part: Substring) -> String {
                let spaced = part.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            guard let name = parts.first else { continue }
            values[decoded(name)] = parts.count > 1 ? decoded(parts[1]) : ""
        }
        return values
    }
}
