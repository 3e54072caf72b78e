/// The type of an ``Endpoint`` property that ``RequestOptions`` took over (`queueName`,
/// `requiresAuthentication`, `usesAccessories`, `middleware`, `skippedMiddleware`). Not for use:
/// it exists so the compiler can say so.
///
/// The old types of those properties conform to it through deprecated conformances. A type that
/// still declares one makes the compiler infer the endpoint's matching associated type from it,
/// and the compiler then warns where the type conforms to ``Endpoint``:
///
/// ```text
/// warning: conformance of 'Bool' to '_RemovedEndpointProperty' is deprecated:
///          an endpoint's `requiresAuthentication` and `usesAccessories` were removed: set them in `options` (RequestOptions)
/// note: in associated type 'Self._RequiresAuthentication' (inferred as 'Bool')
/// ```
///
/// Rename a property of your own that has one of these names.
public protocol _RemovedEndpointProperty {}

/// The removed endpoint property is not declared: the default of every ``Endpoint``.
public struct _EndpointPropertyNotDeclared: _RemovedEndpointProperty, Sendable {}

/// A `queueName: String?` on an endpoint.
@available(*, deprecated, message: "an endpoint's `queueName` was removed: set `queue` in `options` (RequestOptions), or rename the property")
extension Optional: _RemovedEndpointProperty where Wrapped == String {}

/// A `queueName: String` on an endpoint.
@available(*, deprecated, message: "an endpoint's `queueName` was removed: set `queue` in `options` (RequestOptions), or rename the property")
extension String: _RemovedEndpointProperty {}

/// A `requiresAuthentication` or `usesAccessories` on an endpoint.
@available(*, deprecated, message: "an endpoint's `requiresAuthentication` and `usesAccessories` were removed: set them in `options` (RequestOptions), or rename the property")
extension Bool: _RemovedEndpointProperty {}

/// A `middleware: [any APIMiddleware]` on an endpoint.
@available(*, deprecated, message: "an endpoint's `middleware` was removed: set `middleware` in `options` (RequestOptions), or rename the property")
extension Array: _RemovedEndpointProperty where Element == any APIMiddleware {}

/// A `skippedMiddleware: Set<MiddlewareKind>` on an endpoint.
@available(*, deprecated, message: "an endpoint's `skippedMiddleware` was removed: set `skippedMiddleware` in `options` (RequestOptions), or rename the property")
extension Set: _RemovedEndpointProperty where Element == MiddlewareKind {}
