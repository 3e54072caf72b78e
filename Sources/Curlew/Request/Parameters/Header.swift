/// Declares a property as a request header; its value must be a scalar or an array (joined with commas).
///
/// The wire name is the property's name, or the name given in the attribute, or the one in
/// ``Endpoint/parameterNames``. Swift only lets a wrapper attribute carry
/// arguments when the property has an initial value, so a *required* renamed parameter is
/// renamed in ``Endpoint/parameterNames`` instead. A `nil` value is written per
/// ``ParameterEncodingOptions/nilStyle``: omitted by default, sent with an empty value for
/// `.bareName` and `.emptyValue` (a header has no bare form). The memberwise initializer still
/// takes the plain value:
///
/// ```swift
/// struct SearchRequest: Endpoint {
///     typealias Response = SearchResults
///     @Header("X-Token") var token: String? = nil
///     var path: String { "search" }
/// }
/// ```
@propertyWrapper
public struct Header<Value: ParameterConvertible>: Sendable {
    /// The property's value.
    public var wrappedValue: Value
    /// The wire name, or `nil` to use the property's name.
    public let name: String?

    /// Not available: Swift cannot give a wrapper attribute arguments on a property without an
    /// initial value and still let the memberwise initializer take the plain value. Write the
    /// property plainly and rename it in ``Endpoint/parameterNames``, or give it a default.
    @available(
        *, unavailable,
        message: "a renamed @Header without a default cannot work in Swift; write `@Header var note: String` plus `static let parameterNames = [\"note\": \"X-Note\"]`, or give it a default: `@Header(\"X-Note\") var note: String = \"\"`"
    )
    public init(_ name: String) {
        fatalError("unavailable")
    }

    /// Declares the parameter with an initial value and an optional wire name.
    public init(wrappedValue: Value, _ name: String? = nil) {
        self.wrappedValue = wrappedValue
        self.name = name
    }
}

extension Header: Equatable where Value: Equatable {}
extension Header: Hashable where Value: Hashable {}

extension Header: DeclaredParameter {
    func declare(propertyName: String, into parameters: inout RequestParameters) {
        parameters.headers[name ?? propertyName] = wrappedValue.parameterValue
    }
}
