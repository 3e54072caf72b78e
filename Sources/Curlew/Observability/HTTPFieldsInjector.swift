internal import HTTPTypes
internal import Instrumentation

/// Writes a tracer's propagation headers (`traceparent`, `tracestate`, `baggage`…) into a
/// request's header fields, replacing any value the request already had for that name.
struct HTTPFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        carrier[name] = value
    }
}
