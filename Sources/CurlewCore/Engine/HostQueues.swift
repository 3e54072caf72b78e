/// Curlew's own admission under a per-host connection cap: transfers to an origin beyond the
/// cap wait here, first in first out, and the next one starts the moment one of the origin's
/// transfers leaves the multi handle — its connection is back in the cache by then, so the next
/// transfer reuses it.
///
/// libcurl would otherwise hold them in its pending list, which it scans whenever any transfer
/// ends and re-adds in bulk, so under a cap every completion woke every pending transfer of the
/// engine and latency grew with the queue.
///
/// An origin whose transfers turn out to share connections (HTTP/2, learned from a finished
/// transfer: ``markMultiplexing(_:)``) is no longer limited here: the cap counts connections,
/// and one connection carries many of its transfers, which libcurl places itself.
///
/// A pure value over the engine's transfers (`Transfer` is `CurlEasyTransfer`; tests use others),
/// touched only by the engine thread.
package struct HostQueues<Transfer> {
    /// Transfers allowed per origin at once (the engine's share of the per-host cap).
    package let cap: Int
    private var origins: [UInt64: Origin] = [:]
    /// Transfers waiting, over every origin.
    package private(set) var queuedCount = 0

    /// One origin's transfers. Always changed in place in ``origins`` (through its `default:` or
    /// `values` subscript): a copy taken out and written back would share the waiting array, so
    /// the next append would copy the whole queue — on every admission and every release.
    private struct Origin {
        var running = 0
        var multiplexes = false
        var waiting: [(id: UInt64, transfer: Transfer)] = []
        /// Index of the first waiting entry (entries before it have started).
        var head = 0

        var hasWaiting: Bool { head < waiting.count }
        var isIdle: Bool { running == 0 && !hasWaiting && !multiplexes }

        mutating func popFirst() -> (id: UInt64, transfer: Transfer)? {
            guard hasWaiting else { return nil }
            let first = waiting[head]
            head += 1
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                head = 0
            }
            return first
        }

        /// Counts the transfer running when it may start; else queues it. Returns whether it starts.
        mutating func admit(_ transfer: Transfer, id: UInt64, cap: Int) -> Bool {
            if multiplexes || (running < cap && !hasWaiting) {
                running += 1
                return true
            }
            waiting.append((id, transfer))
            return false
        }

        /// One running transfer left; returns the next to start (counted running), if one waits.
        mutating func release(cap: Int) -> (id: UInt64, transfer: Transfer)? {
            running -= 1
            guard running < cap || multiplexes, let first = popFirst() else { return nil }
            running += 1
            return first
        }

        /// Takes the waiting transfer `id` out of the queue.
        mutating func remove(id: UInt64) -> Transfer? {
            guard let index = waiting[head...].firstIndex(where: { $0.id == id }) else { return nil }
            let removed = waiting.remove(at: index).transfer
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                head = 0
            }
            return removed
        }
    }

    package init(cap: Int) {
        self.cap = max(1, cap)
    }

    /// Whether a transfer to `origin` may start now (it is then counted running); otherwise it
    /// waits at the back of the origin's queue.
    package mutating func admit(_ transfer: Transfer, id: UInt64, origin: UInt64) -> Bool {
        let starts = origins[origin, default: Origin()].admit(transfer, id: id, cap: cap)
        if !starts { queuedCount += 1 }
        return starts
    }

    /// A running transfer to `origin` left the multi handle; returns the next one to start (now
    /// counted running), if one waits.
    package mutating func release(_ origin: UInt64) -> (id: UInt64, transfer: Transfer)? {
        guard let index = origins.index(forKey: origin) else { return nil }
        let next = origins.values[index].release(cap: cap)
        if next != nil { queuedCount -= 1 }
        if origins.values[index].isIdle { origins.remove(at: index) }
        return next
    }

    /// Takes a waiting transfer out of its queue (cancelled, or past its deadline while waiting).
    package mutating func remove(id: UInt64, origin: UInt64) -> Transfer? {
        guard let index = origins.index(forKey: origin), let removed = origins.values[index].remove(id: id) else { return nil }
        queuedCount -= 1
        return removed
    }

    /// `origin` multiplexes transfers over its connections: from now on every transfer to it
    /// starts at once; returns those that were waiting (now counted running), in order.
    package mutating func markMultiplexing(_ origin: UInt64) -> [(id: UInt64, transfer: Transfer)] {
        var started: [(id: UInt64, transfer: Transfer)] = []
        origins[origin, default: Origin()].multiplexes = true
        let index = origins.index(forKey: origin)
        while let index, let next = origins.values[index].popFirst() {
            origins.values[index].running += 1
            started.append(next)
        }
        queuedCount -= started.count
        return started
    }

    /// Every waiting transfer, in each origin's order (the engine checks their deadlines and
    /// fails them at shutdown).
    package var waiting: [(id: UInt64, origin: UInt64, transfer: Transfer)] {
        var all: [(id: UInt64, origin: UInt64, transfer: Transfer)] = []
        for (origin, entry) in origins where entry.hasWaiting {
            for (id, transfer) in entry.waiting[entry.head...] { all.append((id, origin, transfer)) }
        }
        return all
    }

    /// Transfers to `origin` counted running (tests).
    package func running(_ origin: UInt64) -> Int { origins[origin]?.running ?? 0 }

    /// The origin of an absolute http(s) URL as a number: FNV-1a over its scheme, host name
    /// (lower-cased, without user information) and port, so `http://a:80` and `https://a` are
    /// different origins. A collision only makes two origins share one queue and cap.
    package static func origin(of url: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
            hash = (hash ^ UInt64(lowered)) &* 0x0000_0100_0000_01b3
        }
        var utf8 = url.utf8[...]
        if let colon = utf8.firstIndex(of: UInt8(ascii: ":")) {
            for byte in utf8[..<colon] { mix(byte) }
            mix(UInt8(ascii: ":"))
            utf8 = utf8[utf8.index(after: colon)...].drop { $0 == UInt8(ascii: "/") }
        }
        var authority = utf8.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) { authority = authority[authority.index(after: at)...] }
        for byte in authority { mix(byte) }
        return hash
    }
}
