internal import Foundation

/// What the engine thread hands back for a finished exchange: the raw header block of the final
/// response (parsed into `HTTPFields` by the caller, off the engine thread), status, body and URL.
struct CompletedTransfer: Sendable {
    var status: Int
    var headerBlock: [UInt8]
    var body: Data
    var url: String
}
