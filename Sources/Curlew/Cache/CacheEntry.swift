public import Foundation

/// One stored answer: the bytes and the response facts HTTP caching needs. What a
/// ``CacheStorage`` keeps under ``key``.
public struct CacheEntry: Sendable, Hashable, Codable {
    /// A response header as stored.
    public struct Header: Sendable, Hashable, Codable {
        /// The field name.
        public var name: String
        /// The field value.
        public var value: String

        /// Creates a header.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The full key: cache version, credential scope and request identity (see ``ResponseCache``).
    public var key: String
    /// The HTTP status code.
    public var status: Int
    /// The response headers (`Set-Cookie` is never stored).
    public var headers: [Header]
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
        key: String, status: Int, headers: [Header], body: Data, url: String, requestTime: Date, storedAt: Date,
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
    public func header(_ name: String) -> String? {
        headers.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value of a header joined with `", "`, `nil` when absent.
    func joinedHeader(_ name: String) -> String? {
        var joined: String?
        for header in headers where Self.sameName(header.name, name) {
            joined = joined.map { $0 + ", " + header.value } ?? header.value
        }
        return joined
    }

    /// ASCII case-insensitive equality of two field names, without Foundation (a hit compares
    /// a handful of names against every stored header).
    static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        guard left.count == right.count else { return false }
        for (a, b) in zip(left, right) where a != b {
            guard a | 0x20 == b | 0x20, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(a | 0x20) else { return false }
        }
        return true
    }

    /// Bytes the entry occupies, roughly (body, key and headers).
    public var size: Int {
        body.count + key.utf8.count + url.utf8.count + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 } + 128
    }
}
