extension ResponseBodyStream {
    /// A response's body as a stream: the stream itself, a collected body as one chunk, and an
    /// error for a body written to a file.
    init(body content: ResponseContent) {
        switch content {
        case .stream(let stream): self = stream
        case .data(let data): self.init(data: data)
        case .file(let path, _): self.init(error: CurlewError(code: .transportFailure, message: "the body was written to \(path), not streamed"))
        }
    }
}
