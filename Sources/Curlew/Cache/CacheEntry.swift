public import Foundation
public import HTTPTypes

/// One stored answer: the bytes and the response facts HTTP caching needs. What a
/// ``CacheStorage`` keeps under ``key``.
public struct CacheEntry: Sendable, Hashable, Codable {
    /// The full key: cache version, credential scope and request identity (see ``ResponseCache``).
    public var key: String
    /// The HTTP status code.
    public var status: Int
    /// The response headers (`Set-Cookie` is never stored).
    public var headers: HTTPFields
    /// The body bytes.
    public var body: Data
    /// The URL that produced the answer.
    public var url: String
    /// When the request that produced the answer was sent (the cache's clock).
    public var requestTime: Date
    /// When the answer arrived or was last confirmed by a `304` (the cache's clock).
    public var storedAt: Date
    /// Lower-cased names of the request headers the answer varies on (`Vary`); empty for none.
    public var varyNames: [String]
    /// A digest of the request's values for ``varyNames``; `nil` when there are none.
    public var varyTag: String?
    /// After this date the storage may delete the entry in an expiry sweep; `nil` for never.
    public var discardAfter: Date?

    /// Creates an entry.
    public init(
        key: String, status: Int, headers: HTTPFields, body: Data, url: String, requestTime: Date, storedAt: Date,
        varyNames: [String] = [], varyTag: String? = nil, discardAfter: Date? = nil
    ) {
        self.key = key
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self.requestTime = requestTime
        self.storedAt = storedAt
        self.varyNames = varyNames
        self.varyTag = varyTag
        self.discardAfter = discardAfter
    }

    /// The first value of a header, by case-insensitive name.
    @available(*, deprecated, message: "read headers[name], e.g. headers[.eTag]")
    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headers[$0] }
    }

    /// Every value of a header joined with `", "`, `nil` when absent.
    func joinedHeader(_ name: String) -> String? {
        guard let name = HTTPField.Name(name) else { return nil }
        let values = headers[values: name]
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// Bytes the entry occupies, roughly (body, key and headers).
    public var size: Int {
        body.count + key.utf8.count + url.utf8.count + headers.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 } + 128
    }
}
