internal import HTTPTypes
internal import Synchronization

/// The 3xx answers a call followed to reach its answer, written down by the ``RedirectStep`` for a
/// step above it that must know them — the cache: an answer reached through a temporary redirect
/// does not stand for the URL first asked. Kept beside the response rather than in it, so a
/// middleware between the two that answers with a response of its own making cannot hide them.
///
/// Each attempt through the redirect step replaces the record as it follows hops and when it
/// returns: after a retry it describes the attempt that answered (or, when the call failed, the
/// hops its last attempt followed before failing).
final class RedirectLog: Sendable {
    /// The hops that led to the latest answer, oldest first; guarded by the mutex.
    private let hops = Mutex<[FollowedRedirect]>([])

    /// Records the hops that led to the answer being returned (none for a direct answer).
    func record(_ followed: [FollowedRedirect]) {
        hops.withLock { $0 = followed }
    }

    /// The hops that led to the latest answer.
    var followed: [FollowedRedirect] {
        hops.withLock { $0 }
    }
}

/// A 3xx answer a client call followed: the URL that answered, its status and headers, without
/// its body.
struct FollowedRedirect: Sendable {
    var url: String
    var status: Int
    var headers: HTTPFields
}
