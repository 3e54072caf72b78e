import Testing

@testable import Curlew
@testable import CurlewCore

/// `TransferTable` against a `Dictionary` doing the same: inserts, replacements, removals in
/// every order, growth, and ids that collide in their home slot.
@Suite("Transfer table")
struct TransferTableTests {
    /// A stand-in transfer: identity is all the table keeps.
    private final class Transfer {}

    @Test func matchesADictionaryThroughRandomInsertsAndRemovals() {
        var generator = SystemRandomNumberGenerator()
        var table = TransferTable<Transfer>(capacity: 1)
        var model: [UInt64: Transfer] = [:]
        // Sequential ids (what the engine hands out), a few far apart, some reused.
        let ids: [UInt64] = Array(1...300) + [1 << 40, 1 << 63, UInt64.max, 0]
        for step in 0..<3_000 {
            let id = ids[Int.random(in: 0..<ids.count, using: &generator)]
            if Bool.random(using: &generator) || step < 100 {
                let value = Transfer()
                table.insert(value, for: id)
                model[id] = value
            } else {
                #expect(table.removeValue(forKey: id) === model.removeValue(forKey: id))
            }
            #expect(table.count == model.count)
        }
        for id in ids { #expect(table[id] === model[id], "id \(id)") }
        #expect(Set(table.transfers.map(\.id)) == Set(model.keys))
        for id in ids.shuffled() { #expect(table.removeValue(forKey: id) === model.removeValue(forKey: id)) }
        #expect(table.isEmpty)
        #expect(table.transfers.isEmpty)
    }

    @Test func removingFromTheMiddleOfAProbeRunKeepsTheRestFindable() {
        var table = TransferTable<Transfer>(capacity: 64)
        let values = (1...40).map { _ in Transfer() }
        for (index, value) in values.enumerated() { table.insert(value, for: UInt64(index + 1)) }
        for id in stride(from: 1, through: 40, by: 3) { #expect(table.removeValue(forKey: UInt64(id)) === values[id - 1]) }
        for id in 1...40 {
            #expect(table[UInt64(id)] === (id % 3 == 1 ? nil : values[id - 1]), "id \(id)")
        }
        #expect(table.removeValue(forKey: 1) == nil)
        table.removeAll()
        #expect(table.isEmpty && table[2] == nil)
    }
}
