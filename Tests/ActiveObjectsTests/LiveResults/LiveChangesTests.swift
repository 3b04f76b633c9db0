import Foundation
import Testing
@testable import ActiveObjects

/// The database of the live-result models: one per test, the suites are serialized.
let liveResultsDatabase = LockedValue<Database?>(nil)

final class LiveItem: ActiveObject {
    override class var database: Database? { liveResultsDatabase.withLock { $0 } }
    @Column var name = ""
    @Column var score = 0
    @Column var shown = true
    @Column(references: LiveTag.self) var tagId: Int64? = nil
    var tag: BelongsTo<LiveTag> { belongsTo(\.$tagId) }
}

final class LiveTag: ActiveObject {
    override class var database: Database? { liveResultsDatabase.withLock { $0 } }
    @Column var label = ""
}

/// A file database (WAL, readers: the defaults) for the live-result models.
func withLiveResultsDB<T: Sendable>(_ body: @escaping @Sendable @MainActor (Database, String) async throws -> T) async throws -> T {
    let folder = try TemporaryDirectory()
    let path = folder.path("live-results.sqlite")
    let db = try Database(path: path)
    liveResultsDatabase.withLock { $0 = db }
    defer {
        try? db.close()
        liveResultsDatabase.withLock { $0 = nil }
    }
    try LiveTag.createTable()
    try LiveItem.createTable()
    return try await withTimeout(60) { try await body(db, path) }
}

@discardableResult
func addItem(_ name: String, score: Int, shown: Bool = true, tag: LiveTag? = nil) throws -> LiveItem {
    let item = LiveItem()
    item.name = name
    item.score = score
    item.shown = shown
    item.tagId = tag?.id
    try item.save()
    return item
}

@Suite(.serialized)
struct LiveChangesTests {
    @Test func theFirstChangeIsTheResultThenRowsAreUpdatedInPlace() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("b", score: 2)
            try addItem("a", score: 1)
            var changes = LiveItem.all.order(by: \.$score).changes().makeAsyncIterator()
            let first = try #require(try await changes.next())
            #expect(first.elements.map(\.name) == ["a", "b"])
            #expect(first.difference.insertions.count == 2 && first.difference.removals.isEmpty)
            #expect(first.updated.isEmpty)
            let a = first.elements[0], b = first.elements[1]

            try await db.execute("UPDATE live_item SET name = 'A' WHERE score = 1")
            let second = try #require(try await changes.next())
            #expect(second.elements.map(\.name) == ["A", "b"])
            #expect(second.elements[0] === a && second.elements[1] === b)
            #expect(second.updated.count == 1 && second.updated[0] === a)
            #expect(second.difference.isEmpty)

            try addItem("c", score: 0)
            let third = try #require(try await changes.next())
            #expect(third.elements.map(\.name) == ["c", "A", "b"])
            #expect(third.elements[1] === a && third.elements[2] === b)
            #expect(third.difference.insertions.count == 1 && third.difference.removals.isEmpty)

            try await LiveItem.delete(where: ["name": "b"])
            let fourth = try #require(try await changes.next())
            #expect(fourth.elements.map(\.name) == ["c", "A"])
            #expect(fourth.difference.removals.count == 1)
            if case .remove(_, let removed, _)? = fourth.difference.removals.first { #expect(removed === b) }
        }
    }
}
