internal import Foundation
internal import Logging

/// Finds what an endpoint type declares that Curlew no longer reads: the endpoint properties
/// ``RequestOptions`` took over, when their value does not reach `options`, and a stored
/// `options` of another type, which hides ``Endpoint/options`` without a word. The compiler warns
/// about the first kind when the old type is used (`_RemovedEndpointProperty`), but a warning
/// can be missed and a stored `options` of another type is legal Swift, so the client also looks
/// once per endpoint type, when it first sends one.
enum RemovedEndpointProperties {
    /// What is wrong with `request`'s type, as a message naming each property and its
    /// replacement; `nil` when nothing is.
    static func problem<R: Endpoint>(in request: R) -> String? {
        var found = (DeprecatedReader.self as any RemovedPropertyReading.Type).removedProperties(of: request)
        for child in Mirror(reflecting: request).children where child.label == "options" {
            if !(child.value is RequestOptions) {
                found.append("`options` (a stored \(type(of: child.value)), not RequestOptions: it hides Endpoint.options; rename it)")
            }
        }
        guard !found.isEmpty else { return nil }
        return "\(R.self) declares what Curlew no longer reads: " + found.joined(separator: "; ")
    }

    /// A release build's one log line per endpoint type (a debug build fails the calls instead).
    static func report(_ problem: String) {
        Logger(label: "curlew").warning("\(problem)")
    }
}

/// Reads the deprecated requirements on purpose. The reading is a deprecated witness of a plain
/// protocol requirement, so the compiler neither warns here nor at the call through the protocol.
private protocol RemovedPropertyReading {
    static func removedProperties<R: Endpoint>(of request: R) -> [String]
}

private enum DeprecatedReader: RemovedPropertyReading {
    @available(*, deprecated, message: "reads the removed endpoint properties to report them")
    static func removedProperties<R: Endpoint>(of request: R) -> [String] {
        // Reported only when the value is lost: a type whose `options` carries it (a stored
        // `queueName` that feeds `options.queue`) is fine.
        let options = request.options
        var found: [String] = []
        // The values come typed as the endpoint's associated types (`_EndpointPropertyNotDeclared`
        // unless the type declares the property with its old type).
        if let queue = (request.queueName as Any) as? String, options.queue != queue {
            found.append("`queueName` (\"\(queue)\"): set `queue` in `options`")
        }
        if (request.requiresAuthentication as Any) as? Bool == true, !options.requiresAuthentication {
            found.append("`requiresAuthentication`: set it in `options`")
        }
        if (request.usesAccessories as Any) as? Bool == false, options.usesAccessories { found.append("`usesAccessories`: set it in `options`") }
        if let middleware = (request.middleware as Any) as? [any APIMiddleware], !middleware.isEmpty, options.middleware.isEmpty {
            found.append("`middleware`: set it in `options`")
        }
        if let skipped = (request.skippedMiddleware as Any) as? Set<MiddlewareKind>, !skipped.isSubset(of: options.skippedMiddleware) {
            found.append("`skippedMiddleware`: set it in `options`")
        }
        return found
    }
}
