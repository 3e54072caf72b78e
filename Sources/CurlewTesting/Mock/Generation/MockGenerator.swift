public import Curlew
public import Foundation

/// Invents a JSON body for a `Decodable` type from the type alone — through its `Decodable`
/// conformance, with a decoder that walks the type and answers every request with a value,
/// deterministically.
///
/// Values follow the property names (`id` → a number or an id-like string, `imageURL`/`avatar` →
/// an image URL, `email`, `name`, `title`, `count`/`total` → small integers,
/// `createdAt`/`date`/`time` → dates in the decoder's strategy, `price` → a decimal), the model's
/// ``MockHinted`` hints and the ``overrides`` by key path. Nested models, arrays (``arrayCount``
/// elements), optionals (present unless ``optionals`` is `.absent`), `CaseIterable` enums and
/// `Scoped` (an allowed value), `AutoCast`, `Default`, `Polymorphic`
/// and `PolymorphicArray` (each member in turn) are covered. A `ValidatableModel` gets a
/// value that passes validation, or a `.mockGenerationFailed` error naming the rule no attempt
/// could meet. The same seed gives the same bytes on every run.
///
/// ```swift
/// let generator = MockGenerator(seed: 7, arrayCount: 2, overrides: ["pictures.takenOn": .date])
/// let text = try generator.jsonText(for: SearchResults.self)    // paste into a fixture and edit
/// let value = try generator.value(of: SearchResults.self)
/// ```
public struct MockGenerator: Sendable {
    /// Whether optional properties get values.
    public enum OptionalPolicy: Sendable, Hashable {
        /// Every optional gets a value (the default), so the whole model shows.
        case present
        /// Optionals are left out (keys absent), to test the sparse path.
        case absent
    }

    /// The seed: the same seed gives the same bytes.
    public var seed: UInt64
    /// Elements in each array (at least one per member for a polymorphic array).
    public var arrayCount: Int
    /// Whether optionals get values.
    public var optionals: OptionalPolicy
    /// Hints by key path from the root of the generated value, with array indices left out:
    /// `"pictures.takenOn": .date`, `"owner.nickname": .absent`. They win over the model's hints.
    public var overrides: [String: MockHint]
    /// The decoder whose strategies apply (dates, snake-case keys, data) — pass the client's
    /// `configuration.decoder` when it has custom ones.
    public var decoder: JSONDecoder
    /// How many attempts (each with different values) before giving up on a value that does not
    /// decode or validate.
    public var attempts: Int

    /// Creates a generator.
    public init(
        seed: UInt64 = 1, arrayCount: Int = 3, optionals: OptionalPolicy = .present, overrides: [String: MockHint] = [:],
        decoder: JSONDecoder = JSONDecoder(), attempts: Int = 16
    ) {
        self.seed = seed
        self.arrayCount = max(0, arrayCount)
        self.optionals = optionals
        self.overrides = overrides
        self.decoder = decoder
        self.attempts = max(1, attempts)
    }

    /// A generated JSON value that decodes as `T` (and passes its validation).
    /// - Throws: `.mockGenerationFailed` explaining what could not be generated.
    public func json<T: Decodable>(for type: T.Type) throws(CurlewError) -> JSONValue {
        try generate(T.self).json
    }

    /// A generated value of `T`, decoded from the generated JSON with ``decoder``.
    /// - Throws: `.mockGenerationFailed`.
    public func value<T: Decodable>(of type: T.Type) throws(CurlewError) -> T {
        try generate(T.self).value
    }

    /// The generated JSON as pretty-printed text with sorted keys, to write into a fixture file
    /// and edit.
    /// - Throws: `.mockGenerationFailed`.
    public func jsonText<T: Decodable>(for type: T.Type) throws(CurlewError) -> String {
        Self.text(try json(for: T.self), pretty: true)
    }

    /// Compact JSON bytes with sorted keys.
    static func data(_ value: JSONValue) -> Data {
        Data(text(value, pretty: false).utf8)
    }

    static func text(_ value: JSONValue, pretty: Bool) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value), let text = String(data: data, encoding: .utf8) else { return "null" }
        return text
    }

    private func generate<T: Decodable>(_ type: T.Type) throws(CurlewError) -> (json: JSONValue, value: T) {
        var failure = ""
        for attempt in 0..<attempts {
            let root = GenerationNode()
            let state = GenerationState(generator: self, attempt: attempt)
            var decoder = GeneratingDecoder(state: state, node: root)
            decoder.hint = overrides[""]
            do {
                _ = try decoder.value(T.self)
                let json = root.json
                let value = try decoder.state.generator.decoder.decode(T.self, from: Self.data(json))
                try Validation.run(value, prefix: "")
                return (json, value)
            } catch let error as DecodingError {
                failure = DecodingFailure(error, body: Data()).message
            } catch let error as CurlewError {
                failure = error.message
            } catch {
                failure = "\(error)"
            }
        }
        throw CurlewError(
            code: .mockGenerationFailed,
            message: "could not generate a \(T.self) that decodes and validates after \(attempts) attempts: \(failure) "
                + "(a MockHint for that key, or an override, can say what to generate)")
    }
}
