internal import Synchronization

/// The `Vary` variant keys one call looked up. A shared tier (``SharedCacheTier``) may take a
/// fleet lock for a variant's miss as for any other key, so the cache tells it when each of
/// those lookups ended, not only the lookup of the call's own key.
///
/// A class because the call that records is a value copied into its steps; `Sendable` through
/// the `Mutex` that guards the key list.
final class VariantLookups: Sendable {
    private let recorded = Mutex<[String]>([])

    /// Notes a lookup of `key` (once).
    func record(_ key: String) {
        recorded.withLock { keys in
            if !keys.contains(key) { keys.append(key) }
        }
    }

    /// The keys looked up, in order.
    var keys: [String] { recorded.withLock { $0 } }
}
