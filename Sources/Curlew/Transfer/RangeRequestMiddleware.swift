internal import HTTPTypes

/// Asks for the rest of a partial download: `Range: bytes=<offset>-` and `If-Range: <validator>`
/// (a strong `ETag` or `Last-Modified`), so a server whose file changed sends it whole (`200`).
/// A `416` answers the range request (the partial file may be complete already): it comes back
/// as a response for the download to decide on, not as a status error.
///
/// The partial file holds decoded bytes (a `gzip` answer was inflated on the way in), and a range
/// counts bytes of the representation the server sends: so the rest is asked for unencoded
/// (`Accept-Encoding: identity`, nothing decoded), and its offsets are the file's offsets.
struct RangeRequestMiddleware: APIMiddleware {
    let offset: Int64
    let validator: String

    var kind: MiddlewareKind { MiddlewareKind("range") }

    nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        var request = request
        request.headers[.range] = "bytes=\(offset)-"
        request.headers[.ifRange] = validator
        request.headers[.acceptEncoding] = "identity"
        request.options.acceptsCompressedResponses = false
        var context = context
        context.handledStatuses.insert(416)
        return try await next(request, context)
    }
}
