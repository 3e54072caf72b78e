internal import Foundation
internal import HTTPTypes
internal import Tracing

/// OpenTelemetry's HTTP client span attributes, from a prepared request and its outcome.
enum HTTPSpanAttributes {
    /// `http.request.method`, `url.full` (redacted: secret query values, user info),
    /// `url.scheme`, `server.address`, `server.port`.
    static func request(_ request: PreparedRequest, into attributes: inout SpanAttributes) {
        attributes["http.request.method"] = request.method.rawValue
        attributes["url.full"] = request.summary.redactedURL
        guard let components = URLComponents(string: request.url) else { return }
        if let scheme = components.scheme { attributes["url.scheme"] = scheme }
        if let host = components.host { attributes["server.address"] = host }
        if let port = components.port ?? (components.scheme == "https" ? 443 : components.scheme == "http" ? 80 : nil) {
            attributes["server.port"] = port
        }
    }

    /// `http.response.status_code`, `network.protocol.version`, `network.peer.address`/`port`,
    /// `curlew.connection.reused`, `error.type` (the status code for 4xx/5xx, the ``/CurlewCore/CurlewError``
    /// code otherwise) and the span's error status; a cancelled call is not an error. For a
    /// streamed body that failed after its head, `status` is the head's and `error` the body's.
    static func finish(_ span: any Span, status: HTTPResponse.Status?, metrics: TransferMetrics?, error: (any Error)?) {
        span.updateAttributes { attributes in
            if let status { attributes["http.response.status_code"] = status.code }
            if let metrics {
                attributes["network.protocol.version"] = metrics.httpVersion
                if let address = metrics.remoteAddress { attributes["network.peer.address"] = address }
                if metrics.remotePort > 0 { attributes["network.peer.port"] = metrics.remotePort }
                attributes["curlew.connection.reused"] = metrics.reusedConnection
            }
            if let curlew = error as? CurlewError {
                // A body that failed after a 2xx head is the error's, not the status's.
                if let status, status.code >= 400 {
                    attributes["error.type"] = "\(status.code)"
                } else {
                    attributes["error.type"] = curlew.code.description
                }
                if let phase = curlew.transportPhase { attributes["curlew.transport.phase"] = phase.name }
            } else if let status, status.code >= 400 {
                attributes["error.type"] = "\(status.code)"
            }
        }
        if error is CancellationError { return }
        if let curlew = error as? CurlewError {
            span.setStatus(SpanStatus(code: .error, message: curlew.code.description))
        } else if error != nil {
            span.setStatus(SpanStatus(code: .error))
        } else if let status, status.code >= 400 {
            span.setStatus(SpanStatus(code: .error))
        }
    }
}
