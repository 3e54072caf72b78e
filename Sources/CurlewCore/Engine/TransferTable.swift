/// The engine's in-flight transfers by id (`Transfer` is `CurlEasyTransfer`; tests use others):
/// an open-addressing table with multiplicative hashing and linear probing, deleting by backward
/// shift (no tombstones).
///
/// Every request inserts once and removes once; a `Dictionary<UInt64, _>` hashed the id with
/// SipHash both times. Ids are sequential, which a multiplicative
/// hash spreads evenly. Touched only by the engine thread.
package struct TransferTable<Transfer> {
    private var slots: [(id: UInt64, transfer: Transfer)?]
    private var shift: UInt64
    package private(set) var count = 0

    /// An empty table with room for `capacity` transfers before it grows.
    package init(capacity: Int = 16) {
        var size = 16
        while size < 2 * capacity { size *= 2 }
        slots = Array(repeating: nil, count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
    }

    package var isEmpty: Bool { count == 0 }

    /// The transfers (in no particular order), as an array: callers may change the table while
    /// they go through it.
    package var transfers: [(id: UInt64, transfer: Transfer)] { slots.compactMap { $0 } }

    package subscript(id: UInt64) -> Transfer? {
        guard let index = index(of: id) else { return nil }
        return slots[index]?.transfer
    }

    /// Adds or replaces the transfer for `id`.
    package mutating func insert(_ transfer: Transfer, for id: UInt64) {
        if 2 * (count + 1) > slots.count { grow() }
        var index = home(of: id)
        while let occupant = slots[index] {
            if occupant.id == id {
                slots[index] = (id, transfer)
                return
            }
            index = (index + 1) & (slots.count - 1)
        }
        slots[index] = (id, transfer)
        count += 1
    }

    /// Removes and returns the transfer for `id`, if any.
    @discardableResult
    package mutating func removeValue(forKey id: UInt64) -> Transfer? {
        guard var hole = index(of: id), let removed = slots[hole] else { return nil }
        slots[hole] = nil
        count -= 1
        // Backward shift: move later entries of the probe run into the hole when the hole lies
        // on their way from their home slot.
        let mask = slots.count - 1
        var index = (hole + 1) & mask
        while let occupant = slots[index] {
            let home = home(of: occupant.id)
            if (index - home) & mask >= (index - hole) & mask {
                slots[hole] = occupant
                slots[index] = nil
                hole = index
            }
            index = (index + 1) & mask
        }
        return removed.transfer
    }

    package mutating func removeAll() {
        for index in slots.indices { slots[index] = nil }
        count = 0
    }

    private func home(of id: UInt64) -> Int {
        Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    private func index(of id: UInt64) -> Int? {
        var index = home(of: id)
        while let occupant = slots[index] {
            if occupant.id == id { return index }
            index = (index + 1) & (slots.count - 1)
        }
        return nil
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: nil, count: 2 * old.count)
        shift -= 1
        count = 0
        for case (let id, let transfer)? in old { insert(transfer, for: id) }
    }
}
