package import CCurlShim
package import HTTPTypes

/// An easy handle lent by the ``EasyHandlePool``, with what it still carries from its last
/// transfer: its settings (``EasyHandleSettings``) and the header list it points at.
///
/// A class, so that lending it, configuring it and giving it back moves one reference rather than
/// the settings it carries.
///
/// Thread-safety (why `@unchecked Sendable` is sound): while pooled, the handle is reachable only
/// through ``EasyHandlePool``'s `idle` mutex, which guards every hand-over; once taken, only the
/// transfer that took it reads or writes its state (`settings`, `forbidsReuse`, the header list),
/// on one thread at a time, until it gives it back through that mutex. The pointers are kept as
/// bit patterns (raw pointers are not `Sendable`).
package final class PooledEasyHandle: @unchecked Sendable {
    /// The `CURL *`.
    private let handleBits: UInt
    /// What the handle was last configured with; `nil` for a new or reset handle, and while a
    /// transfer configures it (a configuration that fails midway leaves a handle the pool resets).
    package private(set) var settings: EasyHandleSettings?
    /// Whether `CURLOPT_FORBID_REUSE` is on. Never at the start of a transfer; the content
    /// decoder turns it on while a compressed stream is unfinished.
    package private(set) var forbidsReuse = false
    /// The header set `headerListBits` was built from, `nil` when there is no list.
    package private(set) var headers: HTTPFields?
    /// The `curl_slist` the handle's `CURLOPT_HTTPHEADER` points at (0 for none). Owned by
    /// this value: freed when replaced or when the handle is cleaned up.
    private var headerListBits: UInt = 0
    /// The lines the list holds besides the header set's own.
    private var listExtras: HeaderListExtras = []
    /// What every handle of the engine carries whatever its request (set again after a reset).
    private let engineSetup: EngineHandleSetup
    /// Whether the engine changed `CURLOPT_TIMEOUT_MS` or `CURLOPT_CONNECTTIMEOUT_MS` for this
    /// transfer (the time a call waited for admission or spent on earlier connection attempts
    /// is taken off its total timeout); the next ``configure(_:body:transfer:setter:)`` sets them
    /// from its options again.
    package private(set) var timeoutsOverridden = false

    /// A new handle from `curl_easy_init` with the engine's setup, `nil` if libcurl cannot
    /// allocate one.
    package static func make(setup: EngineHandleSetup = EngineHandleSetup()) -> PooledEasyHandle? {
        guard let handle = curl_easy_init() else { return nil }
        let pooled = PooledEasyHandle(handleBits: UInt(bitPattern: handle), engineSetup: setup)
        setup.apply(to: handle)
        return pooled
    }

    private init(handleBits: UInt, engineSetup: EngineHandleSetup) {
        self.handleBits = handleBits
        self.engineSetup = engineSetup
    }

    /// The `CURL *`.
    package var handle: UnsafeMutableRawPointer {
        // The bits came from a non-nil pointer.
        UnsafeMutableRawPointer(bitPattern: handleBits).unsafelyUnwrapped
    }

    /// Configures the handle for `new`, setting only what differs from what it carries. When the
    /// options block differs, the handle is reset and the block applied whole, with the
    /// connection options that depend only on it (``CurlConnectionOptions``).
    package func configure(
        _ new: EasyHandleSettings, body: EasyHandleBody, transfer: TransferOptions, setter: CurlOptionSetter
    ) throws(CurlewError) {
        var previous = settings
        settings = nil
        if let carried = previous, carried.options == new.options {
            // The block is carried: only what differs is set below.
        } else {
            if previous != nil { reset() }
            previous = nil
            if let failure = new.options.apply(to: handle) { try setter.check(failure.code, failure.option) }
            try CurlConnectionOptions.apply(transfer, setter: setter)
        }
        try new.apply(replacing: previous, to: handle, body: body, setter: setter)
        if forbidsReuse {
            try setter.set(CURLOPT_FORBID_REUSE, 0)
            forbidsReuse = false
        }
        if timeoutsOverridden {
            try setter.set(CURLOPT_CONNECTTIMEOUT_MS, EasyHandleOptions.milliseconds(new.options.transfer.connectTimeout))
            try setter.set(CURLOPT_TIMEOUT_MS, new.options.transfer.totalTimeout.map(EasyHandleOptions.milliseconds) ?? 0)
            timeoutsOverridden = false
        }
        settings = new
    }

    /// Engine thread, before the handle is added to the multi handle again: what is left of the
    /// call's total timeout (`nil`: none) and connect timeout.
    package func overrideTimeouts(totalMilliseconds: Int?, connectMilliseconds: Int) {
        _ = curlew_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, connectMilliseconds))
        if let totalMilliseconds { _ = curlew_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(1, totalMilliseconds)) }
        timeoutsOverridden = true
    }

    /// Records that `CURLOPT_FORBID_REUSE` was changed during the transfer.
    package func noteForbidsReuse(_ forbidden: Bool) {
        forbidsReuse = forbidden
    }

    /// Points `CURLOPT_HTTPHEADER` at a list for `headers`, built by `lines` only when the handle
    /// does not carry a list for the same header set with the same `extras` already.
    package func ensureHeaders(_ headers: HTTPFields, extras: HeaderListExtras, lines: () -> [String]) -> CURLcode {
        if headerListBits != 0, listExtras == extras, let current = self.headers, Self.same(current, headers) {
            return CURLE_OK
        }
        listExtras = extras
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for line in lines() {
            if let next = curl_slist_append(list, line) { list = next }
        }
        let code = curlew_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
        freeHeaderList()
        headerListBits = UInt(bitPattern: list)
        self.headers = code == CURLE_OK ? headers : nil
        return code
    }

    /// `curl_easy_reset`: every option back to libcurl's default (the DNS and TLS session caches
    /// stay); the header list is dropped.
    package func reset() {
        curl_easy_reset(handle)
        engineSetup.apply(to: handle)
        settings = nil
        forbidsReuse = false
        timeoutsOverridden = false
        freeHeaderList()
    }

    /// Frees the handle and its header list.
    package func cleanup() {
        curl_easy_cleanup(handle)
        freeHeaderList()
    }

    private func freeHeaderList() {
        if let list = UnsafeMutablePointer<curl_slist>(bitPattern: headerListBits) { curl_slist_free_all(list) }
        headerListBits = 0
        headers = nil
    }

    /// The same fields in the same order, each with the same name (as sent) and value.
    ///
    /// By index rather than `elementsEqual`: its iterators hand out `HTTPField?`, and each
    /// of those optionals was destroyed through a value witness.
    private static func same(_ lhs: HTTPFields, _ rhs: HTTPFields) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in lhs.indices {
            let left = lhs[index]
            let right = rhs[index]
            guard left.name.rawName == right.name.rawName, left.value == right.value else { return false }
        }
        return true
    }
}

/// What every easy handle of one engine carries, whatever its request: the socket callbacks of
/// the engine's ``ConnectionLedger`` and the longest a cached connection may stay idle and still
/// be reused (`CURLOPT_MAXAGE_CONN`: a transfer that looks for a connection also closes the
/// cached ones idle for longer).
package struct EngineHandleSetup: Sendable {
    /// The engine's socket ledger, `nil` for none (tests of the pool alone).
    package var ledger: ConnectionLedger?
    /// `CURLOPT_MAXAGE_CONN` in seconds, `nil` for libcurl's default (118 s).
    package var maximumIdleSeconds: Int?

    package init(ledger: ConnectionLedger? = nil, maximumIdleSeconds: Int? = nil) {
        self.ledger = ledger
        self.maximumIdleSeconds = maximumIdleSeconds
    }

    /// Sets the options on a new or reset handle.
    func apply(to handle: UnsafeMutableRawPointer) {
        if let ledger { _ = ledger.install(on: handle) }
        if let maximumIdleSeconds { _ = curlew_easy_setopt_long(handle, CURLOPT_MAXAGE_CONN, maximumIdleSeconds) }
    }
}

/// Lines a header list holds besides the request's own header fields.
package struct HeaderListExtras: OptionSet, Sendable {
    package let rawValue: UInt8

    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `Expect:` and (unless the request has one) `Content-Type:`, removing the headers libcurl
    /// would add to a request with a body.
    package static let bodyRemovals = HeaderListExtras(rawValue: 1 << 0)
    /// `Accept-Encoding: gzip, deflate, br, zstd` (``TransferOptions/acceptsCompressedResponses``), unless
    /// the header set has an `Accept-Encoding` of its own. A line of the list rather than
    /// `CURLOPT_ACCEPT_ENCODING`, which libcurl 7.88 formats twice per transfer, byte by byte
    /// through its `printf`; Curlew decodes the
    /// body itself either way (``ResponseContentDecoder``).
    package static let acceptEncoding = HeaderListExtras(rawValue: 1 << 1)
    /// No `Cookie` line: a cookie jar is attached, and the request's cookies go to
    /// `CURLOPT_COOKIE` (``HeaderLines``).
    package static let cookiesAside = HeaderListExtras(rawValue: 1 << 2)
}
