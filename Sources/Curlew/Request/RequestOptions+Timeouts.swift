/// Per-call timeouts besides ``RequestOptions/totalTimeout``; each overrides the client's
/// ``/CurlewCore/TransferOptions`` value when set.
enum ConnectTimeoutKey: RequestOptionKey {
    static let defaultValue: Duration? = nil
}

enum HeadTimeoutKey: RequestOptionKey {
    static let defaultValue: Duration? = nil
}

enum IdleTimeoutKey: RequestOptionKey {
    static let defaultValue: Duration? = nil
}

extension RequestOptions {
    /// Longest time to establish a connection for this call, overriding
    /// ``/CurlewCore/TransferOptions/connectTimeout``; `nil` keeps the client's. Fails with `.connectTimeout`.
    public var connectTimeout: Duration? {
        get { self[ConnectTimeoutKey.self] }
        set { self[ConnectTimeoutKey.self] = newValue }
    }

    /// Longest wait for the response head after the request was sent (time to first byte) for
    /// this call, overriding ``/CurlewCore/TransferOptions/headTimeout``; `nil` keeps the client's. Fails with
    /// `.headTimeout`.
    public var headTimeout: Duration? {
        get { self[HeadTimeoutKey.self] }
        set { self[HeadTimeoutKey.self] = newValue }
    }

    /// Longest time with no byte sent or received (a stall) for this call, overriding
    /// ``/CurlewCore/TransferOptions/idleTimeout``; `nil` keeps the client's. Fails with `.idleTimeout`.
    public var idleTimeout: Duration? {
        get { self[IdleTimeoutKey.self] }
        set { self[IdleTimeoutKey.self] = newValue }
    }

    /// Writes the call's timeouts into the prepared request's transfer options.
    func applyTimeoutOverrides(to options: inout TransferOptions) {
        if let timeout = totalTimeout { options.totalTimeout = timeout }
        if let timeout = connectTimeout { options.connectTimeout = timeout }
        if let timeout = headTimeout { options.headTimeout = timeout }
        if let timeout = idleTimeout { options.idleTimeout = timeout }
    }
}
