public import Foundation

/// The body of an ``Endpoint``: raw bytes, text, a JSON-encoded value or URL-encoded form fields.
///
/// ```swift
/// var body: RequestPayload? { .json(NewPicture(title: "Dunes")) }
/// var body: RequestPayload? { .form(["user": "ana", "remember": "1"]) }
/// ```
///
/// Encoding happens when the client prepares the request; an encoding failure is an
/// `.encodingFailed` error and nothing is sent.
public struct RequestPayload: Sendable {
    enum Storage: Sendable {
        case bytes(Data, contentType: String)
        case json(any Encodable & Sendable)
        case form([URLQueryItem])
    }

    let storage: Storage

    /// Raw bytes with an explicit content type.
    public static func data(_ data: Data, contentType: String = "application/octet-stream") -> RequestPayload {
        RequestPayload(storage: .bytes(data, contentType: contentType))
    }

    /// UTF-8 text.
    public static func text(_ text: String, contentType: String = "text/plain; charset=utf-8") -> RequestPayload {
        RequestPayload(storage: .bytes(Data(text.utf8), contentType: contentType))
    }

    /// A value encoded as JSON with the client's `JSONEncoder` (`application/json`).
    public static func json(_ value: some Encodable & Sendable) -> RequestPayload {
        RequestPayload(storage: .json(value))
    }

    /// Form fields as `application/x-www-form-urlencoded`, in the given order; a `nil` value
    /// sends the bare name.
    public static func form(_ items: [URLQueryItem]) -> RequestPayload {
        RequestPayload(storage: .form(items))
    }

    /// Form fields as `application/x-www-form-urlencoded`, sorted by name so the bytes are stable.
    public static func form(_ fields: [String: String]) -> RequestPayload {
        .form(fields.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) })
    }

    /// Encodes the body; returns the bytes and their content type.
    func encoded(with encoder: JSONEncoder) throws -> (Data, contentType: String) {
        switch storage {
        case .bytes(let data, let contentType):
            return (data, contentType)
        case .json(let value):
            return (try encoder.encode(value), "application/json")
        case .form(let items):
            return (Data(PercentEncoding.formEncoded(items).utf8), "application/x-www-form-urlencoded")
        }
    }
}
