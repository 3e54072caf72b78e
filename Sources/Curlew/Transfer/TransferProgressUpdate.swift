/// The value a ``TransferProgressMonitor`` yields is now the engine's ``/CurlewCore/TransferProgress``: both
/// counters, with `bytesSent`/`fractionSent` for an upload and `bytesReceived`/`fractionReceived`
/// for a download.
@available(*, deprecated, renamed: "TransferProgress")
public typealias TransferProgressUpdate = TransferProgress
