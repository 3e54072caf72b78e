@testable import Curlew
import Testing

/// ``RecencyList``: the least recently used key after every kind of change, and against a plain
/// array model under a long seeded sequence of adds, uses and removals.
@Suite("Recency list")
struct RecencyListTests {
    @Test func theLeastRecentlyUsedKeyFollowsAddsUsesAndRemovals() {
        var list = RecencyList<String>()
        #expect(list.leastRecent == nil)
        let a = list.add("a")
        let b = list.add("b")
        let c = list.add("c")
        #expect(list.leastRecent == "a")
        #expect(list.count == 3)
        list.use(a)
        #expect(list.leastRecent == "b")
        list.use(a)  // already the newest
        list.remove(b)
        #expect(list.leastRecent == "c")
        list.remove(c)
        #expect(list.leastRecent == "a")
        list.remove(a)
        #expect(list.leastRecent == nil)
        #expect(list.count == 0)
        // Slots of removed keys are given out again.
        let d = list.add("d")
        #expect([a, b, c].contains(d))
        #expect(list.leastRecent == "d")
        list.removeAll()
        #expect(list.leastRecent == nil)
    }

    @Test func aSeededSequenceMatchesAnArrayModel() {
        var list = RecencyList<Int>()
        var model: [Int] = []  // least recently used first
        var slots: [Int: RecencyList<Int>.Slot] = [:]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % bound
        }
        var mismatches = 0
        for _ in 0..<20_000 {
            let key = next(64)
            switch (next(3), slots[key]) {
            case (0, nil):
                slots[key] = list.add(key)
                model.append(key)
            case (1, let slot?):
                list.use(slot)
                model.removeAll { $0 == key }
                model.append(key)
            case (2, let slot?):
                list.remove(slot)
                slots[key] = nil
                model.removeAll { $0 == key }
            default:
                continue
            }
            if list.leastRecent != model.first || list.count != model.count { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(!model.isEmpty)
    }
}
