/// Keys in the order they were last used, for least-recently-used eviction.
///
/// Adding a key, marking it used, removing it and finding the least recently used one each take
/// constant time: the keys form a doubly linked list inside one array, and the slot ``add(_:)``
/// returns addresses a key from then on (a store keeps it beside its entry, so marking a hit
/// costs no hashing). Searching a store's entries for the oldest use instead would cost time in
/// proportion to their number on every eviction, and a full store evicts on every write.
struct RecencyList<Key> {
    /// Where a key sits in the list; valid until the key is removed.
    typealias Slot = Int

    private struct Node {
        /// `nil` while the slot is vacant.
        var key: Key?
        /// The next less recently used slot.
        var older: Slot?
        /// The next more recently used slot.
        var newer: Slot?
    }

    private var nodes: [Node] = []
    /// Slots of removed keys, given to the next keys added.
    private var vacant: [Slot] = []
    private var oldest: Slot?
    private var newest: Slot?

    /// An empty list.
    init() {}

    /// The least recently used key, `nil` when the list is empty.
    var leastRecent: Key? { oldest.flatMap { nodes[$0].key } }

    /// How many keys the list holds.
    var count: Int { nodes.count - vacant.count }

    /// Adds `key` as the most recently used.
    mutating func add(_ key: Key) -> Slot {
        let node = Node(key: key, older: newest, newer: nil)
        let slot: Slot
        if let reused = vacant.popLast() {
            slot = reused
            nodes[slot] = node
        } else {
            slot = nodes.count
            nodes.append(node)
        }
        link(slot)
        return slot
    }

    /// Marks the key in `slot` the most recently used.
    mutating func use(_ slot: Slot) {
        guard slot != newest else { return }
        unlink(slot)
        nodes[slot].older = newest
        nodes[slot].newer = nil
        link(slot)
    }

    /// Removes the key in `slot`; the slot may go to a key added later.
    mutating func remove(_ slot: Slot) {
        unlink(slot)
        nodes[slot] = Node(key: nil, older: nil, newer: nil)
        vacant.append(slot)
    }

    /// Removes every key.
    mutating func removeAll() {
        self = RecencyList()
    }

    /// Makes `slot`, whose `older` is the current newest, the newest.
    private mutating func link(_ slot: Slot) {
        if let newest { nodes[newest].newer = slot } else { oldest = slot }
        newest = slot
    }

    /// Takes `slot` out of the order, joining its neighbours.
    private mutating func unlink(_ slot: Slot) {
        let node = nodes[slot]
        if let older = node.older { nodes[older].newer = node.newer } else { oldest = node.newer }
        if let newer = node.newer { nodes[newer].older = node.older } else { newest = node.older }
    }
}
