/// The serialization a `Decodable` response is read from.
public enum ResponseFormat: Sendable, Hashable {
    /// JSON (RFC 8259), decoded with the client's `JSONDecoder`.
    case json
    /// A property list (XML or binary), decoded with `PropertyListDecoder`. Key paths do not
    /// apply to property lists.
    case propertyList
}
