public import Foundation

/// The body of a `RawResponse`: collected bytes, a file on disk, or a stream being received.
///
/// Which one a transport returns follows `TransportContext.responseBody`: collected data by
/// default (what decoding needs), a stream for `APIClient.stream(_:highWaterMark:options:)`, a file for
/// downloads.
public enum ResponseContent: Sendable {
    /// The whole body, in memory.
    case data(Data)
    /// The body was written to this file; `length` bytes.
    case file(path: String, length: Int64)
    /// The body arrives while it is read, with back-pressure: the transfer pauses while the
    /// reader is behind.
    case stream(ResponseBodyStream)
}
