import Foundation
import Testing
@testable import ActiveObjects

/// Issue 22's property test: random inserts, updates, deletes and reorders — through models,
/// raw SQL, transactions and a second `Database` on the file — against a live result with a
/// filter, an order and a limit. After every commit the elements equal a fresh fetch, in order
/// and value by value, and every row still present is the same object as before. (In the
/// serialized suite of `LiveChangesTests`: the models share one database at a time.)
extension LiveChangesTests {
    struct Snapshot: Equatable, CustomStringConvertible {
        var rows: [String]
        init(_ items: [LiveItem]) {
            rows = items.map { "\($0.id ?? -1):\($0.name):\($0.score):\($0.shown):\($0.memo)" }
        }
        var description: String { rows.joined(separator: " ") }
    }

    @Test(arguments: [
        (seed: 22 as UInt64, limit: 12 as Int?, offset: nil as Int?),
        (seed: 7, limit: nil, offset: nil),
        (seed: 1_234, limit: 8, offset: 3),
    ])
    func randomCommitsKeepTheResultEqualToAFreshFetchAndKeepTheObjects(seed: UInt64, limit: Int?, offset: Int?) async throws {
        try await withLiveResultsDB { db, path in
            let other = try Database(path: path)
            defer { try? other.close() }
            var random = SeededGenerator(seed: seed)
            var counter = 0
            func nextName() -> String {
                counter += 1
                return "n\(counter)"
            }
            try await db.transaction {
                for _ in 0..<30 {
                    try addItem("n\(Int.random(in: 0..<1_000_000))-seed", score: Int.random(in: 0..<20), shown: Bool.random())
                }
            }
            var query = LiveItem.where(\.$shown == true).order(by: \.$score, .descending).order(by: \.$name)
            if let limit { query = query.limit(limit) }
            if let offset { query = query.offset(offset) }
            let observed = query
            var changes = observed.changes().makeAsyncIterator()
            var current = try #require(try await changes.next(isolation: #isolation)).elements

            for step in 0..<300 {
                let ids = try await db.rows("SELECT id FROM live_item").map { try $0[0] as Int64 }
                let someID = ids.randomElement(using: &random)
                let operation = Int.random(in: 0..<12, using: &random)
                var description = "step \(step), operation \(operation)"
                switch operation {
                case 0:      // insert through a model
                    try await Self.insert(nextName(), &random)
                case 1:      // update the order through a model
                    if let someID, let item = try await LiveItem.find(id: someID) {
                        item.score = Int.random(in: 0..<20, using: &random)
                        try await item.save()
                    }
                case 2:      // flip the filter through raw SQL
                    if let someID { try await db.execute("UPDATE live_item SET shown = NOT shown WHERE id = ?", [someID]) }
                case 3:      // delete through a model
                    if let someID, let item = try await LiveItem.find(id: someID) { try await item.delete() }
                case 4:      // delete through raw SQL, several rows
                    let score = Int.random(in: 0..<20, using: &random)
                    try await db.execute("DELETE FROM live_item WHERE score = ?", [score])
                case 5:      // another Database on the file changes the order
                    if let someID {
                        try await other.execute("UPDATE live_item SET score = ? WHERE id = ?",
                                                [Int.random(in: 0..<20, using: &random), someID])
                    }
                case 6:      // another Database inserts
                    try await other.execute("INSERT INTO live_item (name, score, shown, memo) VALUES (?, ?, 1, '')",
                                            [nextName(), Int.random(in: 0..<20, using: &random)])
                case 7:      // a value that is neither filter nor order, through a model
                    if let someID, let item = try await LiveItem.find(id: someID) {
                        item.memo = "m\(Int.random(in: 0..<5, using: &random))"
                        try await item.save()
                    }
                case 8:      // a transaction of several changes
                    let name1 = nextName(), name2 = nextName()
                    let score = Int.random(in: 0..<20, using: &random)
                    try await db.transaction {
                        try addItem(name1, score: score)
                        if let someID { try db.execute("UPDATE live_item SET score = score + 3 WHERE id = ?", [someID]) }
                        try addItem(name2, score: score, shown: false)
                    }
                case 9:      // a rolled-back transaction changes nothing
                    struct Abort: Error {}
                    _ = try? await db.transaction {
                        try db.execute("DELETE FROM live_item")
                        throw Abort()
                    }
                case 10:     // REPLACE, which deletes a row without telling the update hook
                    if let someID {
                        try await db.execute("INSERT OR REPLACE INTO live_item (id, name, score, shown, memo) VALUES (?, ?, ?, 1, '')",
                                             [someID, nextName(), Int.random(in: 0..<20, using: &random)])
                    }
                default:     // now and then, every row goes (the truncate optimization)
                    if Int.random(in: 0..<8, using: &random) == 0 {
                        description += " (delete all)"
                        try await db.execute("DELETE FROM live_item")
                    } else {
                        try await Self.insert(nextName(), &random)
                    }
                }
                // Wait for the live result to reach what a fresh fetch returns now.
                let expected = Snapshot(try await observed.all())
                var previous = current
                while Snapshot(current) != expected {
                    guard let change = try await changes.next(isolation: #isolation) else {
                        Issue.record("the live result ended at \(description)")
                        return
                    }
                    // Every row still present is the same object as before.
                    let before = Dictionary(previous.map { ($0.id!, $0) }, uniquingKeysWith: { first, _ in first })
                    for object in change.elements {
                        if let old = before[object.id!] {
                            #expect(old === object, "\(description): row \(object.id!) became another object")
                        }
                    }
                    #expect(previous.applying(change.difference)?.map { ObjectIdentifier($0) }
                            == change.elements.map { ObjectIdentifier($0) }, "\(description): the difference does not lead to the elements")
                    current = change.elements
                    previous = current
                }
                #expect(Snapshot(current) == expected, "\(description)")
            }
        }
    }

    static func insert(_ name: String, _ random: inout SeededGenerator) async throws {
        let item = LiveItem()
        item.name = name
        item.score = Int.random(in: 0..<20, using: &random)
        item.shown = Int.random(in: 0..<3, using: &random) > 0
        try await item.save()
    }
}
