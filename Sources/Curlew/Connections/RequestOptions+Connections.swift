/// Per-call connection options; each overrides the client's ``/CurlewCore/ConnectionOptions`` value when set.
enum MaximumReceiveSpeedKey: RequestOptionKey {
    static let defaultValue: Int? = nil
}

enum MaximumSendSpeedKey: RequestOptionKey {
    static let defaultValue: Int? = nil
}

enum HostOverridesKey: RequestOptionKey {
    static let defaultValue: [HostOverride]? = nil
}

extension RequestOptions {
    /// This call's download speed limit in bytes per second, overriding
    /// ``/CurlewCore/ConnectionOptions/maximumReceiveSpeed``; `nil` keeps the client's.
    public var maximumReceiveSpeed: Int? {
        get { self[MaximumReceiveSpeedKey.self] }
        set { self[MaximumReceiveSpeedKey.self] = newValue }
    }

    /// This call's upload speed limit in bytes per second, overriding
    /// ``/CurlewCore/ConnectionOptions/maximumSendSpeed``; `nil` keeps the client's.
    public var maximumSendSpeed: Int? {
        get { self[MaximumSendSpeedKey.self] }
        set { self[MaximumSendSpeedKey.self] = newValue }
    }

    /// This call's host overrides, replacing ``/CurlewCore/ConnectionOptions/hostOverrides``; `nil` keeps the
    /// client's.
    public var hostOverrides: [HostOverride]? {
        get { self[HostOverridesKey.self] }
        set { self[HostOverridesKey.self] = newValue }
    }

    /// Writes the call's connection overrides into the prepared request's transfer options.
    func applyConnectionOverrides(to options: inout TransferOptions) {
        if let speed = maximumReceiveSpeed { options.connection.maximumReceiveSpeed = speed }
        if let speed = maximumSendSpeed { options.connection.maximumSendSpeed = speed }
        if let overrides = hostOverrides { options.connection.hostOverrides = overrides }
    }
}
