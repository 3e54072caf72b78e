internal import Foundation

/// What the engine thread hands back for an exchange: the raw header block of the final response
/// (parsed into `HTTPFields` by the caller, off the engine thread), status, body and URL.
///
/// For a collected or file body it comes at the end, with metrics; for a streamed body it comes
/// when the head is complete, with the stream and no metrics.
package struct CompletedTransfer: Sendable {
    /// The final status code.
    package var status: Int
    /// The final response's header lines, without the status line.
    package var headerBlock: [UInt8]
    /// The body: collected bytes, a file, or a stream still receiving.
    package var content: ResponseContent
    /// The URL that produced the response (after libcurl's redirects).
    package var url: String
    /// libcurl's timings and counters; `nil` for streams.
    package var metrics: TransferMetrics?
}
