public import Foundation
internal import Synchronization

/// A model that checks itself after decoding (required-but-empty fields, ranges…).
///
/// A failure is a data-format error: ``/CurlewCore/CurlewError/Code/validationFailed`` with the full path
/// from the root of the body.
///
/// ```swift
/// struct Picture: Decodable, Sendable, ValidatableModel {
///     var id: String
///     var width: Int
///     func validate() throws {
///         if id.isEmpty { throw ValidationFailure("must not be empty", field: "id") }
///         if !(1...10_000).contains(width) { throw ValidationFailure("expected 1...10000, found \(width)", field: "width") }
///     }
/// }
/// ```
///
/// Curlew validates the decoded value, each element of a decoded top-level array, and (with the
/// `CurlewDecoding` product) each member of a `Polymorphic` / `PolymorphicArray`, where the full
/// coding path is known. Validate nested values from your own `validate()`, or wrap them in
/// `CurlewDecoding`'s `Validated`.
public protocol ValidatableModel {
    /// Checks the value.
    /// - Throws: A ``ValidationFailure`` (or any error) when the value is not acceptable.
    func validate() throws
}

/// Why a ``ValidatableModel`` value is not acceptable.
public struct ValidationFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The offending member relative to the validated value (`"id"`, `"items[2].name"`), if any.
    public var field: String?
    /// What is wrong, e.g. `"must not be empty"`.
    public var reason: String

    /// Creates a failure.
    /// - Parameters:
    ///   - reason: What is wrong.
    ///   - field: The member it concerns, relative to the validated value.
    public init(_ reason: String, field: String? = nil) {
        self.reason = reason
        self.field = field
    }

    /// `field: reason`, or the reason alone.
    public var description: String { field.map { "\($0): \(reason)" } ?? reason }
}

extension ValidationFailure: LocalizedError {
    /// The ``description``, so `localizedDescription` says what is wrong.
    public var errorDescription: String? { description }
}

/// Lets validation look inside arrays without knowing their element type.
protocol ValidatableElements {
    var validatableElements: [Any] { get }
}

/// Marks `Optional`, which `Validation.run` looks through like the `Any` casts do.
protocol OptionalValue {}

extension Optional: OptionalValue {}

extension Array: ValidatableElements {
    var validatableElements: [Any] { map { $0 } }
}

/// `package`: `CurlewTesting`'s mock generator only hands out values that pass validation.
package enum Validation {
    /// Validates a decoded value of a static type: a type that is neither a ``ValidatableModel``
    /// nor an array (the common case) costs two metatype checks, without boxing the value into
    /// `Any` and casting it to two protocols.
    package static func run<T>(_ value: T, prefix: String) throws(CurlewError) {
        guard mayNeedValidation(T.self) else { return }
        try run(value as Any, prefix: prefix)
    }

    /// Whether values of a type can hold something to validate, by type; guarded by the mutex.
    /// One entry per decoded type the process sees.
    private static let candidates = Mutex<[ObjectIdentifier: Bool]>([:])

    /// Whether `type` is a ``ValidatableModel``, an array or an optional (which the `Any` casts
    /// look through: a decoded `Model?` is validated), worked out once per type: a conformance
    /// check is a runtime search, a cached answer a dictionary lookup.
    private static func mayNeedValidation<T>(_ type: T.Type) -> Bool {
        let key = ObjectIdentifier(type)
        if let known = candidates.withLock({ $0[key] }) { return known }
        let answer = type is any ValidatableModel.Type || type is any ValidatableElements.Type || type is any OptionalValue.Type
        candidates.withLock { $0[key] = answer }
        return answer
    }

    /// Validates a value and, if it is an array, its elements; paths are relative to `prefix`.
    static func run(_ value: Any, prefix: String) throws(CurlewError) {
        try check(value, path: prefix)
        if let array = value as? any ValidatableElements {
            for (index, element) in array.validatableElements.enumerated() {
                try check(element, path: JSONKeyPath.join(prefix, "[\(index)]"))
            }
        }
    }

    private static func check(_ value: Any, path: String) throws(CurlewError) {
        guard let validatable = value as? any ValidatableModel else { return }
        do {
            try validatable.validate()
        } catch let failure as ValidationFailure {
            let full = JSONKeyPath.join(path, failure.field ?? "")
            throw CurlewError(code: .validationFailed, message: "\(full.isEmpty ? "<root>" : full): \(failure.reason)", dataPath: full, underlying: failure)
        } catch {
            throw CurlewError(code: .validationFailed, message: "\(path.isEmpty ? "<root>" : path): \(error)", dataPath: path, underlying: error)
        }
    }
}
