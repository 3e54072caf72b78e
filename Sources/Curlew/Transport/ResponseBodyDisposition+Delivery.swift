package import Foundation
package import HTTPTypes

extension ResponseBodyDisposition {
    /// A body already in memory, delivered where this disposition says, the way a transfer
    /// delivers a network answer: collected as it is, streamed as one chunk, written to a new file,
    /// or fed — head first — to a download's partial file (status-aware, resumable, refusing the
    /// media types the download refuses).
    ///
    /// The hook for a transport that answers without the network (`CurlewTesting`'s mocks): it
    /// uses the sinks a real transfer uses without naming them, so the core knows nothing of mocks
    /// and the mock nothing of sinks.
    /// - Throws: what the sinks throw: `.fileNotWritable`, or a download's refusal of the answer.
    package func deliver(
        _ body: Data, status: HTTPResponse.Status, headers: HTTPFields, for request: PreparedRequest
    ) throws(CurlewError) -> ResponseContent {
        switch storage {
        case .collect:
            return .data(body)
        case .stream:
            return .stream(ResponseBodyStream(data: body))
        case .file(let path):
            let sink = try FileBodySink.create(path: path, request: request.summary)
            if case .abort(let code, let message) = body.withUnsafeBytes({ sink.receive($0) }) {
                throw CurlewError(code: code, message: message, request: request.summary)
            }
            if let error = sink.finish() { throw error }
            return .file(path: path, length: Int64(body.count))
        case .download(let target):
            let sink = try DownloadBodySink.open(target, request: request.summary)
            var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
            for field in headers { head += "\(field.name.rawName): \(field.value)\r\n" }
            head += "\r\n"
            sink.headArrived(status: status.code, headerBlock: Array(head.utf8))
            if case .abort(let code, let message) = body.withUnsafeBytes({ sink.receive($0) }) {
                let error = CurlewError(code: code, message: message, request: request.summary)
                sink.fail(error)
                throw error
            }
            if let error = sink.finish() { throw error }
            return sink.content()
        }
    }
}
