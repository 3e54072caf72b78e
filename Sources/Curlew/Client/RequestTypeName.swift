internal import Synchronization

/// The name of an endpoint type as `String(describing:)` prints it, worked out once per type.
///
/// Printing a metatype goes through `Mirror` and several dynamic casts, and every call needs the
/// name for its events, logs and errors.
enum RequestTypeName {
    /// Names by type; guarded by the mutex. One entry per endpoint type the process sends.
    private static let names = Mutex<[ObjectIdentifier: String]>([:])

    /// `String(describing: type)`, from the cache after the first call.
    static func of<R>(_ type: R.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = names.withLock({ $0[key] }) { return name }
        let name = String(describing: type)
        names.withLock { $0[key] = name }
        return name
    }
}
