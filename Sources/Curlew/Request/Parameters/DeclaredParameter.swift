internal import Synchronization

/// Implemented by the parameter property wrappers (`@Query`, `@Field`, `@Header`, `@Path`) so
/// the client can find them with `Mirror` when it prepares a request.
protocol DeclaredParameter {
    /// Adds this parameter to `parameters`, named `propertyName` unless the wrapper has a name.
    func declare(propertyName: String, into parameters: inout RequestParameters)
}

/// Collects a request's declared parameters and its ``Endpoint/parameters`` dictionary.
enum ParameterCollector {
    /// Endpoint types seen to have no `@Query`/`@Field`/`@Header`/`@Path` property.
    private static let withoutDeclaredParameters = Mutex(Set<ObjectIdentifier>())

    static func collect<R: Endpoint>(_ request: R) -> RequestParameters {
        var parameters = RequestParameters(encoding: request.parameterEncoding, options: request.parameterEncodingOptions)
        let type = ObjectIdentifier(R.self)
        // A type's stored properties never change, so whether it declares parameters is known
        // after its first request: reflection runs only for types that do.
        if !withoutDeclaredParameters.withLock({ $0.contains(type) }) {
            let renames = R.parameterNames
            var found = false
            for child in Mirror(reflecting: request).children {
                guard let declared = child.value as? any DeclaredParameter else { continue }
                found = true
                var name = child.label ?? ""
                if name.hasPrefix("_") { name.removeFirst() }
                declared.declare(propertyName: renames[name] ?? name, into: &parameters)
            }
            if !found { _ = withoutDeclaredParameters.withLock { $0.insert(type) } }
        }
        let dictionary = request.parameters
        if !dictionary.isEmpty {
            // A declared `@Field` of the same name wins (the documented rule): the dictionary
            // only adds names the properties did not declare.
            for key in dictionary.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) where parameters.fields[key] == nil {
                parameters.fields[key] = dictionary[key]
            }
        }
        return parameters
    }
}
