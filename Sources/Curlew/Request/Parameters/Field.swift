/// Declares a property as a body parameter, encoded per ``Endpoint/parameterEncoding`` (form, JSON, or the query string).
///
/// The wire name is the property's name, or the name given in the attribute, or the one in
/// ``Endpoint/parameterNames``. Swift only lets a wrapper attribute carry
/// arguments when the property has an initial value, so a *required* renamed parameter is
/// renamed in ``Endpoint/parameterNames`` instead. A `nil` value is written per
/// ``ParameterEncodingOptions/nilStyle`` (omitted by default). The memberwise initializer still
/// takes the plain value:
///
/// ```swift
/// struct SearchRequest: Endpoint {
///     typealias Response = SearchResults
///     @Field("user_name") var userName = ""
///     @Field var password: String
///     var path: String { "search" }
/// }
/// ```
@propertyWrapper
public struct Field<Value: ParameterConvertible>: Sendable {
    /// The property's value.
    public var wrappedValue: Value
    /// The wire name, or `nil` to use the property's name.
    public let name: String?

    /// Not available: Swift cannot give a wrapper attribute arguments on a property without an
    /// initial value and still let the memberwise initializer take the plain value. Write the
    /// property plainly and rename it in ``Endpoint/parameterNames``, or give it a default.
    @available(
        *, unavailable,
        message: "a renamed @Field without a default cannot work in Swift; write `@Field var note: String` plus `static let parameterNames = [\"note\": \"X-Note\"]`, or give it a default: `@Field(\"X-Note\") var note: String = \"\"`"
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

extension Field: Equatable where Value: Equatable {}
extension Field: Hashable where Value: Hashable {}

extension Field: DeclaredParameter {
    func declare(propertyName: String, into parameters: inout RequestParameters) {
        parameters.fields[name ?? propertyName] = wrappedValue.parameterValue
    }
}
