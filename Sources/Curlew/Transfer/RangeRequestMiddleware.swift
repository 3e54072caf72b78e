internal import HTTPTypes

/// Asks for the rest of a partial download: `Range: bytes=<offset>-` and `If-Range: <validator>`
/// (a strong `ETag` or `Last-Modified`), so a server whose file changed sends it whole (`200`).
struct RangeRequestMiddleware: APIMiddleware {
    let offset: Int64
    let validator: String

    var kind: MiddlewareKind { MiddlewareKind("range") }

    nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        var request = request
        request.headers[.range] = "bytes=\(offset)-"
        request.headers[.ifRange] = validator
        return try await next(request, context)
    }
}
