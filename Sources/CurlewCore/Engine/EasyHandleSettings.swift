internal import CCurlShim
package import Foundation

/// Everything a transfer sets on its easy handle except the pointers to itself.
///
/// A pooled handle remembers the settings it was last configured with (``PooledEasyHandle``);
/// the next transfer computes its own and applies exactly what differs
/// (``apply(replacing:to:body:)``). The options block (``EasyHandleOptions``: timeouts, TLS,
/// proxy…) is the one part applied whole: when it differs the handle is reset first, so an option
/// the new request leaves at libcurl's default never carries over. Everything else is changed
/// option by option, each one back to libcurl's default when the new transfer does not use it.
///
/// Immutable, and a class: the pooled handle keeps one reference to what it carries, and the
/// comparison reads the old and the new settings in place rather than copying the transfer
/// options they hold from value to value.
package final class EasyHandleSettings: Sendable {
    /// Timeouts, limits, protocol, TLS and proxy choices.
    package let options: EasyHandleOptions
    /// The method and how the body is handed over.
    package let method: EasyHandleMethod
    /// Whether `CURLOPT_REQUEST_TARGET` carries path and query (``RequestTarget``).
    package let sendsRequestTarget: Bool
    /// A download's stall detector: `CURLOPT_LOW_SPEED_LIMIT` (bytes a second) and
    /// `CURLOPT_LOW_SPEED_TIME` (seconds); `nil` for none.
    package let lowSpeed: LowSpeedLimit?
    /// Whether libcurl's progress callback is on (only when someone listens to events).
    package let reportsProgress: Bool
    /// Whether `CURLOPT_PREREQFUNCTION` runs right before each attempt is sent: to guard against a
    /// silent resend (``ReplayGuard``), or to check that an empty file body is still empty
    /// (``FileRequestBody/emptyFileChange``).
    package let checksBeforeSending: Bool

    package init(
        options: EasyHandleOptions, method: EasyHandleMethod, sendsRequestTarget: Bool, lowSpeed: LowSpeedLimit?,
        reportsProgress: Bool, checksBeforeSending: Bool
    ) {
        self.options = options
        self.method = method
        self.sendsRequestTarget = sendsRequestTarget
        self.lowSpeed = lowSpeed
        self.reportsProgress = reportsProgress
        self.checksBeforeSending = checksBeforeSending
    }

    /// `CURLOPT_LOW_SPEED_LIMIT` and `CURLOPT_LOW_SPEED_TIME`.
    package struct LowSpeedLimit: Equatable, Sendable {
        package var bytesPerSecond: Int
        package var seconds: Int
    }

    /// Applies these settings to `handle`, which carries `previous` (`nil`: new or reset).
    /// `body` is what the method options hand to libcurl.
    package func apply(
        replacing previous: EasyHandleSettings?, to handle: UnsafeMutableRawPointer, body: EasyHandleBody,
        setter: CurlOptionSetter
    ) throws(CurlewError) {
        if previous?.sendsRequestTarget == true, !sendsRequestTarget { try setter.set(CURLOPT_REQUEST_TARGET, nil) }
        if previous?.lowSpeed != lowSpeed {
            try setter.set(CURLOPT_LOW_SPEED_LIMIT, lowSpeed?.bytesPerSecond ?? 0)
            try setter.set(CURLOPT_LOW_SPEED_TIME, lowSpeed?.seconds ?? 0)
        }
        try method.apply(replacing: previous?.method, body: body, setter: setter)
        if checksBeforeSending != (previous?.checksBeforeSending ?? false) {
            let code = curlew_easy_setopt_prereq_callback(handle, checksBeforeSending ? CurlCallbacks.prereq : nil)
            try setter.check(code, CURLOPT_PREREQFUNCTION)
        }
        if reportsProgress != (previous?.reportsProgress ?? false) {
            if reportsProgress {
                try setter.check(curlew_easy_setopt_xferinfo_callback(handle, CurlCallbacks.progress), CURLOPT_XFERINFOFUNCTION)
            }
            try setter.set(CURLOPT_NOPROGRESS, reportsProgress ? 0 : 1)
        }
    }
}

/// The body of a request as the handle's method options see it.
package struct EasyHandleBody {
    /// In-memory bytes, copied to libcurl (`CURLOPT_COPYPOSTFIELDS`).
    package var bytes: Data?
    /// The length of a body read while sending, `nil` when unknown (chunked).
    package var sourceLength: Int64?
}

/// How a transfer's method and body are set on the handle.
package enum EasyHandleMethod: Equatable {
    /// `CURLOPT_HTTPGET`.
    case get
    /// `CURLOPT_NOBODY`.
    case head
    /// A bodiless method other than GET and HEAD: `CURLOPT_CUSTOMREQUEST`.
    case bodiless(String)
    /// A POST of no bytes: an empty `CURLOPT_COPYPOSTFIELDS`.
    case emptyPost
    /// In-memory bytes, copied; `custom` names a method other than POST.
    case bytes(custom: String?)
    /// A POST whose body libcurl reads while sending (`CURLOPT_POST`, the read callback).
    case readPost(seeks: Bool)
    /// Any other method whose body libcurl reads while sending (`CURLOPT_UPLOAD`), renamed by
    /// `custom` unless it is PUT.
    case upload(custom: String?, seeks: Bool)

    /// Whether a handle already configured this way needs nothing set again: the method options
    /// hold no per-transfer data.
    private var isCarriedWhole: Bool {
        switch self {
        case .get, .head, .bodiless, .emptyPost: true
        case .bytes, .readPost, .upload: false
        }
    }

    /// Whether the method reads its body through the read callback (and `seeks`: rewinds a file
    /// through the seek callback).
    package var readsBody: (reads: Bool, seeks: Bool) {
        switch self {
        case .readPost(let seeks), .upload(_, let seeks): (true, seeks)
        case .get, .head, .bodiless, .emptyPost, .bytes: (false, false)
        }
    }

    /// The custom method name set with `CURLOPT_CUSTOMREQUEST`, if any.
    private var customName: String? {
        switch self {
        case .bodiless(let name): name
        case .bytes(let custom), .upload(let custom, _): custom
        case .get, .head, .emptyPost, .readPost: nil
        }
    }

    /// Whether `CURLOPT_COPYPOSTFIELDS` holds a copy of the body.
    private var copiesFields: Bool {
        switch self {
        case .emptyPost, .bytes: true
        default: false
        }
    }

    /// Sets the method, moving the handle from `previous` (`nil`: new or reset handle).
    package func apply(replacing previous: EasyHandleMethod?, body: EasyHandleBody, setter: CurlOptionSetter) throws(CurlewError) {
        if previous == self, isCarriedWhole { return }
        if let previous {
            // Back to a plain GET: `CURLOPT_HTTPGET` also clears `UPLOAD` and `NOBODY`, which
            // `CURLOPT_POST` would not; a copied body is freed rather than kept in the pool.
            if previous.copiesFields, !copiesFields { try setter.set(CURLOPT_POSTFIELDS, pointer: nil) }
            if previous != .get, self != .get, !(previous.copiesFields && copiesFields) { try setter.set(CURLOPT_HTTPGET, 1) }
            if previous.customName != nil, customName == nil { try setter.set(CURLOPT_CUSTOMREQUEST, nil) }
            let (read, seek) = previous.readsBody
            if read, !readsBody.reads {
                try setter.check(curlew_easy_setopt_data_callback(setter.handle, CURLOPT_READFUNCTION, nil), CURLOPT_READFUNCTION)
                try setter.set(CURLOPT_READDATA, pointer: nil)
            }
            if seek, !readsBody.seeks {
                try setter.check(curlew_easy_setopt_seek_callback(setter.handle, nil), CURLOPT_SEEKFUNCTION)
                try setter.set(CURLOPT_SEEKDATA, pointer: nil)
            }
        }
        switch self {
        case .get:
            try setter.set(CURLOPT_HTTPGET, 1)
        case .head:
            try setter.set(CURLOPT_NOBODY, 1)
        case .bodiless(let name):
            try setter.set(CURLOPT_CUSTOMREQUEST, name)
        case .emptyPost:
            try setter.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: 0)
            try setter.set(CURLOPT_COPYPOSTFIELDS, "")
        case .bytes(let custom):
            let bytes = body.bytes ?? Data()
            try setter.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: curl_off_t(bytes.count))
            let code = bytes.withUnsafeBytes { raw in
                // libcurl copies `count` bytes; an empty body still needs an address to copy from.
                withUnsafePointer(to: 0) { zero in
                    curlew_easy_setopt_pointer(setter.handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(zero)))
                }
            }
            try setter.check(code, CURLOPT_COPYPOSTFIELDS)
            if custom != previous?.customName { try setter.set(CURLOPT_CUSTOMREQUEST, custom) }
        case .readPost(let seeks):
            // A size of -1 (unknown) makes libcurl use chunked encoding over HTTP/1.1.
            try setter.set(CURLOPT_POST, 1)
            try setter.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: curl_off_t(body.sourceLength ?? -1))
            try setReadCallbacks(previous: previous, seeks: seeks, setter: setter)
        case .upload(let custom, let seeks):
            try setter.set(CURLOPT_UPLOAD, 1)
            try setter.set(CURLOPT_INFILESIZE_LARGE, offset: curl_off_t(body.sourceLength ?? -1))
            if custom != previous?.customName { try setter.set(CURLOPT_CUSTOMREQUEST, custom) }
            try setReadCallbacks(previous: previous, seeks: seeks, setter: setter)
        }
    }

    /// The read callback (and the seek callback for files, so libcurl can rewind one to send it
    /// again on a 307/308 or a retried connection), unless the handle has them already. Their
    /// user data points at the transfer and is set by it.
    private func setReadCallbacks(previous: EasyHandleMethod?, seeks: Bool, setter: CurlOptionSetter) throws(CurlewError) {
        let had = previous?.readsBody ?? (reads: false, seeks: false)
        if !had.reads {
            try setter.check(curlew_easy_setopt_data_callback(setter.handle, CURLOPT_READFUNCTION, CurlCallbacks.read), CURLOPT_READFUNCTION)
        }
        if seeks, !had.seeks {
            try setter.check(curlew_easy_setopt_seek_callback(setter.handle, CurlCallbacks.seek), CURLOPT_SEEKFUNCTION)
        }
    }
}
