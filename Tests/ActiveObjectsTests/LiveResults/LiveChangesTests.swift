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
    @Column var memo = ""
    @Column(references: LiveTag.self) var tagId: Int64? = nil
    var tag: BelongsTo<LiveTag> { belongsTo(\.$tagId) }
}

final class LiveTag: ActiveObject {
    override class var database: Database? { liveResultsDatabase.withLock { $0 } }
    @Column var label = ""
}

/// A file database (WAL, readers: the defaults) for the live-result models.
/// `open` opens another kind (in memory, one connection…) from the file's path.
func withLiveResultsDB<T: Sendable>(opening open: (String) throws -> Database = { try Database(path: $0) },
                                    _ body: @escaping @Sendable @MainActor (Database, String) async throws -> T)
    async throws -> T {
    let folder = try TemporaryDirectory()
    let path = folder.path("live-results.sqlite")
    let db = try open(path)
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

/// The label of an item's tag (the relation preloaded by `including`, if any), read synchronously.
func tagLabel(of item: LiveItem) throws -> String? { try item.tag.get()?.label }

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

    @Test func aCommitThatChangesOneRowReadsThatRowNotTheResult() async throws {
        try await withLiveResultsDB { db, _ in
            try await db.transaction {
                for index in 0..<500 { try addItem("item \(index)", score: index) }
            }
            var changes = LiveItem.all.order(by: \.$score).changes().makeAsyncIterator()
            let first = try #require(try await changes.next(isolation: #isolation))
            #expect(first.elements.count == 500)
            let observation = try #require(changes.observation)
            let before = observation.readCounts

            // A commit before the update hook was installed may read the keys; the next ones
            // read the changed row alone.
            let warmUp = try #require(try await LiveItem.find(id: first.elements[10].id!))
            warmUp.memo = "warm"
            try await warmUp.save()
            _ = try #require(try await changes.next(isolation: #isolation))
            let afterWarmUp = observation.readCounts

            let edited = try #require(try await LiveItem.find(id: first.elements[200].id!))
            edited.memo = "changed"
            try await edited.save()
            let change = try #require(try await changes.next(isolation: #isolation))
            #expect(change.updated.map(\.memo) == ["changed"])
            #expect(change.updated.first === first.elements[200])
            #expect(change.difference.isEmpty)
            let after = observation.readCounts
            #expect(after.changedRows == afterWarmUp.changedRows + 1)
            #expect(after.keys == afterWarmUp.keys)
            #expect(after.rows == afterWarmUp.rows + 1, "read \(after.rows - afterWarmUp.rows) rows for one changed row")
            #expect(before.keys >= 1)
        }
    }

    @Test func commitsOfAnotherDatabaseOnTheFileKeepTheObjects() async throws {
        try await withLiveResultsDB { _, path in
            try addItem("a", score: 1)
            try addItem("b", score: 2)
            let other = try Database(path: path)
            defer { try? other.close() }
            var changes = LiveItem.all.order(by: \.$score).changes().makeAsyncIterator()
            let first = try #require(try await changes.next(isolation: #isolation))
            let (a, b) = (first.elements[0], first.elements[1])
            try await other.execute("UPDATE live_item SET score = 3 WHERE name = 'a'")
            let second = try #require(try await changes.next(isolation: #isolation))
            #expect(second.elements.map(\.name) == ["b", "a"])
            #expect(second.elements[0] === b && second.elements[1] === a)
            #expect(a.score == 3)
            #expect(second.updated.count == 1 && second.updated[0] === a)
            // A move: one removal and one insertion, associated.
            #expect(second.difference.insertions.count == 1 && second.difference.removals.count == 1)
            if case .insert(_, _, let associated)? = second.difference.insertions.first { #expect(associated != nil) }
        }
    }

    @Test func anUnsavedEditSurvivesAChangeToTheRowsOtherColumns() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            var changes = LiveItem.all.changes().makeAsyncIterator()
            let item = try #require(try await changes.next(isolation: #isolation)?.elements.first)
            item.name = "mine"
            try await db.execute("UPDATE live_item SET score = 5, memo = 'theirs' WHERE id = ?", [item.id])
            let change = try #require(try await changes.next(isolation: #isolation))
            #expect(change.elements.first === item)
            #expect(item.name == "mine" && item.score == 5 && item.memo == "theirs")
            #expect(item.hasChanges && item.changedColumns == ["name"])
            // The edit is the user's to save: it writes the name only.
            try await item.save()
            let saved = try #require(try await LiveItem.find(id: item.id!))
            #expect(saved.name == "mine" && saved.score == 5 && saved.memo == "theirs")
            // The row changed under an edited column too: the edit stays, compared with the new row.
            item.memo = "edited"
            try await db.execute("UPDATE live_item SET memo = 'again' WHERE id = ?", [item.id])
            _ = try #require(try await changes.next(isolation: #isolation))
            #expect(item.memo == "edited" && item.changedColumns == ["memo"])
        }
    }

    @Test func observersOfAnObjectAreToldPropertyByProperty() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            var changes = LiveItem.all.changes().makeAsyncIterator()
            let item = try #require(try await changes.next(isolation: #isolation)?.elements.first)
            let nameChanges = track { _ = item.name }
            let scoreChanges = track { _ = item.score }
            try await db.execute("UPDATE live_item SET score = 2 WHERE id = ?", [item.id])
            _ = try #require(try await changes.next(isolation: #isolation))
            #expect(scoreChanges.value == 1)
            #expect(nameChanges.value == 0)
        }
    }

    @Test func limitsOffsetsAndFiltersFollowSQLite() async throws {
        try await withLiveResultsDB { db, _ in
            for index in 0..<10 { try addItem("n\(index)", score: index, shown: index % 2 == 0) }
            let query = LiveItem.where(\.$shown == true).order(by: \.$score, .descending).limit(3).offset(1)
            var changes = query.changes().makeAsyncIterator()
            var last = try #require(try await changes.next(isolation: #isolation))
            #expect(last.elements.map(\.score) == [6, 4, 2])
            let kept = last.elements[1]
            // A row before the window leaves: the window slides.
            try await db.execute("UPDATE live_item SET shown = 0 WHERE score = 8")
            last = try #require(try await changes.next(isolation: #isolation))
            #expect(last.elements.map(\.score) == [4, 2, 0])
            #expect(last.elements[0] === kept)
            // A row in the window leaves: the next one enters.
            try await db.execute("DELETE FROM live_item WHERE score = 2")
            last = try #require(try await changes.next(isolation: #isolation))
            let fresh = try await query.all()
            #expect(last.elements.map(\.score) == fresh.map(\.score))
            #expect(last.elements[0] === kept)
        }
    }

    @Test func deletingEveryRowAndReplacingRowsAreFollowed() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            try addItem("b", score: 2)
            var changes = LiveItem.all.order(by: \.$score).changes().makeAsyncIterator()
            _ = try #require(try await changes.next(isolation: #isolation))
            try addItem("warm-up", score: 3)      // installs the update hook
            _ = try #require(try await changes.next(isolation: #isolation))
            // DELETE without WHERE may empty the table without telling the update hook.
            try await db.execute("DELETE FROM live_item")
            var change = try #require(try await changes.next(isolation: #isolation))
            #expect(change.elements.isEmpty)
            try addItem("c", score: 1)
            try addItem("d", score: 2)
            change = try #require(try await changes.next(isolation: #isolation))
            while change.elements.count < 2 { change = try #require(try await changes.next(isolation: #isolation)) }
            let d = change.elements[1]
            // REPLACE deletes the conflicting row without telling the update hook.
            try await db.execute("INSERT OR REPLACE INTO live_item (id, name, score, shown, memo) VALUES (?, 'e', 0, 1, '')",
                                 [change.elements[0].id])
            change = try #require(try await changes.next(isolation: #isolation))
            #expect(change.elements.map(\.name) == ["e", "d"])
            #expect(change.elements[1] === d)
        }
    }

    @Test func relationsLoadedWithIncludingFollowTheirRows() async throws {
        try await withLiveResultsDB { db, _ in
            let tag = LiveTag()
            tag.label = "red"
            try await tag.save()
            try addItem("a", score: 1, tag: tag)
            var changes = LiveItem.all.including(\.tag).changes().makeAsyncIterator()
            let item = try #require(try await changes.next(isolation: #isolation)?.elements.first)
            #expect(item.preloadedRelations != nil)
            #expect(try tagLabel(of: item) == "red")
            try await db.execute("UPDATE live_tag SET label = 'blue'")
            let change = try #require(try await changes.next(isolation: #isolation))
            #expect(change.elements.first === item)
            #expect(try tagLabel(of: item) == "blue")
            // The parent's key changes: the relation follows.
            let green = LiveTag()
            green.label = "green"
            try await green.save()
            let stored = try #require(try await LiveItem.find(id: item.id!))
            stored.tagId = green.id
            try await stored.save()
            while try tagLabel(of: item) != "green" {
                _ = try #require(try await changes.next(isolation: #isolation))
            }
            #expect(change.elements.first === item)
        }
    }

    @Test func errorsEndTheSequence() async throws {
        try await withLiveResultsDB { db, _ in
            var changes = LiveItem.where("no_such_column = 1").changes().makeAsyncIterator()
            await #expect(throws: DatabaseError.self) { _ = try await changes.next(isolation: #isolation) }
            var closing = LiveItem.all.changes().makeAsyncIterator()
            _ = try #require(try await closing.next(isolation: #isolation))
            try db.close()
            await #expect(throws: ActiveObjectError.databaseClosed) { _ = try await closing.next(isolation: #isolation) }
        }
        var orphan = LiveItem.all.changes().makeAsyncIterator()
        await #expect(throws: ActiveObjectError.noDatabase(model: "LiveItem")) { _ = try await orphan.next() }
    }

    @Test func leavingTheLoopEndsTheLiveResult() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            for try await change in LiveItem.all.changes() {
                #expect(change.elements.count == 1)
                break
            }
            let deadline = Date().addingTimeInterval(10)
            while db.observations.count > 0 && Date() < deadline { try await Task.sleep(nanoseconds: 2_000_000) }
            #expect(db.observations.count == 0)
        }
    }

    /// A wake-up with nothing to read (a second fetch after an external change was already
    /// covered) must not make the live result forget the table it follows.
    @Test func aFetchWithNothingToReadKeepsFollowingTheTable() async throws {
        try await withLiveResultsDB { _, _ in
            try addItem("a", score: 1)
            var changes = LiveItem.all.order(by: \.$id).changes().makeAsyncIterator()
            let item = try #require(try await changes.next(isolation: #isolation)?.elements.first)
            let observation = try #require(changes.observation)
            for _ in 0..<2 {
                // What the scheduler does when a change arrives while a fetch is running and
                // the fetch already covered it: one more fetch, with no rows pending.
                observation.request(.external)
                try await Task.sleep(nanoseconds: 100_000_000)
            }
            let copy = try #require(try await LiveItem.find(id: item.id!))
            copy.name = "b"
            try await copy.save()
            let change = try #require(try await changes.next(isolation: #isolation))
            #expect(change.updated.first === item && item.name == "b")
        }
    }
}
