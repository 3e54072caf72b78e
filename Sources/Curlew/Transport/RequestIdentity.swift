public import Foundation
internal import Crypto

/// What a request *is*, independent of when it is sent: method, URL without volatile parameters
/// and a digest of the body — computed by the ``APIClient`` before any middleware, so signatures,
/// timestamps and tokens that middleware add never enter it.
///
/// It is the key a response cache stores under and the name a fixture answers to:
///
/// ```swift
/// // GET https://api.example.com/search?time=1700000000&key=fog   (volatileParameters: ["time"])
/// identity.url       // "https://api.example.com/search?key=fog"
/// identity.key       // "GET https://api.example.com/search?key=fog"
/// ```
public struct RequestIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The request type's name, e.g. `"SearchRequest"`.
    public var name: String
    /// The HTTP method.
    public var method: String
    /// The URL with volatile query parameters removed and the remaining ones sorted by name.
    public var url: String
    /// The in-memory body, when there is one (files and streams are identified by method and URL).
    public var body: Data?

    /// Creates an identity from a prepared request.
    /// - Parameters:
    ///   - request: The request as prepared, before any middleware.
    ///   - name: The request type's name.
    ///   - volatileParameters: Query parameter names left out (`time`, `lat`, `lng`…).
    public init(_ request: PreparedRequest, name: String, volatileParameters: Set<String> = []) {
        self.name = name
        self.method = request.method.rawValue
        self.url = volatileParameters.isEmpty ? request.url : Self.removing(volatileParameters, from: request.url)
        self.body = request.content?.data
    }

    /// The SHA-256 of the body in lower-case hex, `nil` without an in-memory body.
    public var bodyDigest: String? {
        guard let body else { return nil }
        return SHA256.hash(data: body).map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
        }.joined()
    }

    /// `METHOD URL`, plus ` sha256:<digest>` when there is a body: stable across runs.
    public var key: String {
        bodyDigest.map { "\(method) \(url) sha256:\($0)" } ?? "\(method) \(url)"
    }

    /// ``key``.
    public var description: String { key }

    /// The URL without the named query parameters, the rest sorted by name; the values of a
    /// repeated name keep their order (`?sort=price&sort=name` asks for another list than
    /// `?sort=name&sort=price`).
    static func removing(_ names: Set<String>, from url: String) -> String {
        var url = url
        guard let offset = url.withUTF8({ $0.firstIndex(ofByte: UInt8(ascii: "?")) }) else { return url }
        let mark = url.utf8.index(url.utf8.startIndex, offsetBy: offset)
        let base = String(url[..<mark])
        let afterMark = url.utf8.index(after: mark)
        let query = url[afterMark...]
        let kept = query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            (pair: pair, name: pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        }.filter { item in
            let name = String(item.name)
            return !names.contains(name.removingPercentEncoding ?? name)
        }
        // Different names in the order of their pairs' text (the keys stored so far), one
        // name's pairs in the order they came.
        let sorted = kept.enumerated().sorted { lhs, rhs in
            lhs.element.name == rhs.element.name ? lhs.offset < rhs.offset : lhs.element.pair < rhs.element.pair
        }
        return sorted.isEmpty ? base : base + "?" + sorted.map { String($0.element.pair) }.joined(separator: "&")
    }
}
