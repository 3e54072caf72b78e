/// The body sink and source of one transfer, made from where the response body goes
/// (``TransferSinkKind``) and what the request sends.
///
/// Made before the handle is configured: a download file is created and an upload file opened
/// first, so a bad path fails the call before anything is sent.
package struct TransferParties {
    package let sink: any ResponseBodySink
    package let source: RequestBodySource?
    /// Whether the caller is resumed at the head (a streamed body).
    package let resumesAtHead: Bool
    /// A download's stall detector, `nil` for none.
    package let lowSpeed: EasyHandleSettings.LowSpeedLimit?

    package init(request: PreparedRequest, disposition: TransferSinkKind, id: UInt64, engine: CurlEngine) throws(CurlewError) {
        switch disposition {
        case .collect:
            sink = BufferedBodySink(maximumSize: request.options.maximumBodySize)
        case .stream(let highWaterMark):
            // A cancelled reader gets `CancellationError`, as everywhere else in Curlew.
            sink = StreamBodySink(highWaterMark: highWaterMark, hooks: engine.hooks(for: id))
        case .file(let path):
            sink = try FileBodySink.create(path: path, request: request.summary)
        case .custom(let maker):
            sink = try maker.makeSink(for: request.summary)
        }
        resumesAtHead = if case .stream = disposition { true } else { false }
        if case .custom(let maker) = disposition, let stall = maker.stallLimit {
            // libcurl ends it with CURLE_OPERATION_TIMEDOUT, "Operation too slow…" (`.idleTimeout`).
            lowSpeed = .init(bytesPerSecond: stall.bytesPerSecond, seconds: stall.seconds)
        } else {
            lowSpeed = nil
        }
        do {
            switch request.content {
            case .file(let path, _)?:
                source = .file(try FileRequestBody(path: path, request: request.summary))
            case .stream(let stream)?:
                source = .stream(RequestBodyPump(length: stream.length, request: request.summary, hooks: engine.hooks(for: id)))
            case .data?, nil:
                source = nil
            }
        } catch {
            sink.fail(error)
            throw error
        }
    }
}
