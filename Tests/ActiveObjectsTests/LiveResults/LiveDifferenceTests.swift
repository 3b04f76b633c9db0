import Foundation
import Testing
@testable import ActiveObjects

/// The difference a live change reports (by identity, moves associated), against random
/// edits of a list: applying it to the old elements gives the new ones.
@Suite struct LiveDifferenceTests {
    @Test func theDifferenceLeadsFromTheOldElementsToTheNewOnes() throws {
        var random = SeededGenerator(seed: 17)
        let pool = (0..<60).map { _ in LiveTag() }
        for _ in 0..<500 {
            let old = Array(pool.shuffled(using: &random).prefix(Int.random(in: 0...40, using: &random)))
            var new = old.filter { _ in Int.random(in: 0..<5, using: &random) > 0 }
            new.shuffle(using: &random)
            if Bool.random(using: &random) { new.sort { ObjectIdentifier($0) < ObjectIdentifier($1) } }
            let extra = pool.filter { object in !old.contains { $0 === object } }
            new += extra.prefix(Int.random(in: 0...5, using: &random))
            let difference = LiveResultState<LiveTag>.difference(from: old, to: new)
            let applied = try #require(old.applying(difference))
            #expect(applied.map(ObjectIdentifier.init) == new.map(ObjectIdentifier.init))
            // A row in both lists is never a plain removal or insertion: it moved, associated.
            for change in difference {
                switch change {
                case let .remove(_, element, associated):
                    #expect((associated != nil) == new.contains { $0 === element })
                case let .insert(_, element, associated):
                    #expect((associated != nil) == old.contains { $0 === element })
                }
            }
        }
    }

    @Test func tenThousandRowsThatAllEnterOrAllMove() {
        let objects = (0..<10_000).map { _ in LiveTag() }
        let entered = LiveResultState<LiveTag>.difference(from: [], to: objects)
        #expect(entered.insertions.count == 10_000 && entered.removals.isEmpty)
        let reversed = LiveResultState<LiveTag>.difference(from: objects, to: objects.reversed())
        #expect(reversed.insertions.count == 9_999)
        #expect(objects.applying(reversed)?.map(ObjectIdentifier.init) == objects.reversed().map(ObjectIdentifier.init))
    }
}
