import Foundation
import Testing
@testable import ActiveObjects

// Review of issue 22 (live results that keep their objects): cases where a live result must
// converge to what a fresh fetch returns, and lifecycle promises. In the serialized suite of
// `LiveChangesTests` (the models share one database at a time).

/// A model without foreign keys (so that SQLite may empty its table with the truncate
/// optimization, which the update hook does not see).
final class ReviewEntry: ActiveObject {
    override class var database: Database? { liveResultsDatabase.withLock { $0 } }
    @Column var name = ""
    @Column var rank = 0
}

/// A tree: a node belongs to another node of the same table.
final class ReviewNode: ActiveObject {
    override class var database: Database? { liveResultsDatabase.withLock { $0 } }
    @Column var name = ""
    @Column(references: ReviewNode.self) var parentId: Int64? = nil
    var parent: BelongsTo<ReviewNode> { belongsTo(\.$parentId) }
}

/// Items as text, to compare a live result with a fresh fetch value by value.
func reviewRows(_ items: [LiveItem]) -> [String] {
    items.map { "\($0.id ?? -1):\($0.name):\($0.score):\($0.shown):\($0.memo)" }
}

/// Waits (up to `timeout`) for a live result to hold what a fresh fetch of `query` returns now;
/// returns both.
@MainActor
func settle(_ results: LiveResults<LiveItem>, _ query: Query<LiveItem>,
            timeout: Double = 3) async throws -> (live: [String], fresh: [String]) {
    let fresh = reviewRows(try await query.all())
    _ = await eventually(timeout: timeout) { reviewRows(results.elements) == fresh }
    return (reviewRows(results.elements), fresh)
}

/// Two commits that change one row's memo, each awaited: the first installs the update hook
/// (and reads the keys), after which commits of this database are followed row by row.
@MainActor
func warmUp(_ results: LiveResults<LiveItem>, _ query: Query<LiveItem>, db: Database) async throws {
    for round in 0..<2 {
        try await db.execute("UPDATE live_item SET memo = ? WHERE id = (SELECT min(id) FROM live_item)", ["warm \(round)"])
        let (live, fresh) = try await settle(results, query)
        #expect(live == fresh, "warm-up \(round)")
    }
}

/// `withLiveResultsDB` with options of one's own.
func withReviewDB<T: Sendable>(_ options: Database.Options,
                               _ body: @escaping @Sendable @MainActor (Database) async throws -> T) async throws -> T {
    let folder = try TemporaryDirectory()
    let db = try Database(path: folder.path("review.sqlite"), options: options)
    liveResultsDatabase.withLock { $0 = db }
    defer {
        try? db.close()
        liveResultsDatabase.withLock { $0 = nil }
    }
    try LiveTag.createTable()
    try LiveItem.createTable()
    return try await withTimeout(60) { try await body(db) }
}

extension LiveChangesTests {
    // MARK: Rows the update hook does not report

    /// SQLite's update hook reports an UPDATE that changes the rowid with the NEW rowid only;
    /// the old rowid's row is gone without being reported. When the new row does not match the
    /// filter, the changed-rows read finds nothing and the old row stays in the result.
    @Test func reviewARowWhoseIDChangesAndLeavesTheFilterLeavesTheResult() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            try addItem("b", score: 2)
            let query = LiveItem.where(\.$shown == true).order(by: \.$score)
            let results = query.liveResults()
            #expect(await eventually { results.isLoaded })
            try await warmUp(results, query, db: db)

            try await db.execute("UPDATE live_item SET id = 1000, shown = 0 WHERE name = 'a'")
            var (live, fresh) = try await settle(results, query)
            #expect(live == fresh, "the row whose id changed is still in the live result")

            // A later commit of another row does not repair it (it reads that row alone).
            try await db.execute("UPDATE live_item SET memo = 'later' WHERE name = 'b'")
            (live, fresh) = try await settle(results, query)
            #expect(live == fresh, "still there after a later commit")
            results.cancel()
        }
    }

    /// The truncate optimization also applies to a `DELETE` without `WHERE` run by a trigger of
    /// another table; the statement that fired the trigger changed one row of that other table,
    /// which the hook did report, so the count check does not notice the missing rows.
    @Test func reviewATriggerThatEmptiesTheTableIsFollowed() async throws {
        try await withLiveResultsDB { db, _ in
            try ReviewEntry.createTable()
            try await db.execute("CREATE TRIGGER review_wipe AFTER INSERT ON live_tag BEGIN DELETE FROM review_entry; END")
            for (name, rank) in [("a", 1), ("b", 2), ("c", 3)] {
                let entry = ReviewEntry()
                entry.name = name
                entry.rank = rank
                try await entry.save()
            }
            let query = ReviewEntry.all.order(by: \.$rank)
            let results = query.liveResults()
            #expect(await eventually { results.isLoaded && results.elements.count == 3 })
            // Warm up: the hook is installed by the first commit after the live result started.
            for round in 0..<2 {
                try await db.execute("UPDATE review_entry SET name = ? WHERE rank = 1", ["a\(round)"])
                #expect(await eventually(timeout: 3) { results.elements.first?.name == "a\(round)" })
            }

            try await db.execute("INSERT INTO live_tag (label) VALUES ('wipe')")
            #expect(try await ReviewEntry.countAll() == 0)
            #expect(await eventually(timeout: 3) { results.elements.isEmpty },
                    "the trigger emptied the table; the live result still shows \(results.elements.map(\.name))")
            results.cancel()
        }
    }

    // MARK: Filters whose truth depends on other rows of the same table

    /// A filter with a subquery of the model's own table: the query reads one table, so
    /// commits are followed by reading the changed rows alone — but a change to one row
    /// changes whether OTHER rows match.
    @Test func reviewAFilterOverItsOwnTableIsFollowed() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            try addItem("b", score: 2)
            try addItem("c", score: 3)
            let query = LiveItem.where("score = (SELECT max(score) FROM live_item)")
            let results = query.liveResults()
            #expect(await eventually { results.isLoaded })
            try await warmUp(results, query, db: db)
            #expect(results.elements.map(\.name) == ["c"])

            try await db.execute("UPDATE live_item SET score = 0 WHERE name = 'c'")
            let (live, fresh) = try await settle(results, query)
            #expect(live == fresh, "b is now the highest score")
            results.cancel()
        }
    }

    /// `joining` a relation to the same table (a tree): the parent's change decides whether the
    /// child matches, and the child's row did not change.
    @Test func reviewJoiningARelationOfTheSameTableIsFollowed() async throws {
        try await withLiveResultsDB { db, _ in
            try ReviewNode.createTable()
            let root = ReviewNode()
            root.name = "red"
            try await root.save()
            let child = ReviewNode()
            child.name = "leaf"
            child.parentId = root.id
            try await child.save()
            let query = ReviewNode.all.joining(\.parent, where: \.$name == "red")
            let results = query.liveResults()
            #expect(await eventually { results.isLoaded })
            #expect(results.elements.map(\.name) == ["leaf"])
            // Warm up with commits that change the child only (its memo-like column: name).
            for round in 0..<2 {
                try await db.execute("UPDATE review_node SET name = ? WHERE id = ?", ["leaf\(round)", child.id])
                #expect(await eventually(timeout: 3) { results.elements.first?.name == "leaf\(round)" })
            }

            try await db.execute("UPDATE review_node SET name = 'blue' WHERE id = ?", [root.id])
            #expect(try await query.count() == 0)
            #expect(await eventually(timeout: 3) { results.elements.isEmpty },
                    "the parent is no longer red; the live result still shows \(results.elements.map(\.name))")
            results.cancel()
        }
    }

    // MARK: Scheduling

    /// A fetch of the changed rows that fails with a transient `busy` (every reader in use for
    /// longer than the busy timeout) is retried — but the rows it had taken are gone: the retry
    /// finds nothing pending and reads nothing.
    @Test func reviewAFetchRetriedAfterBusyStillReadsTheChangedRows() async throws {
        var options = Database.Options()
        options.maximumReaderCount = 1
        options.busyTimeout = .milliseconds(50)
        try await withReviewDB(options) { db in
            try addItem("a", score: 1)
            try addItem("b", score: 2)
            let query = LiveItem.all.order(by: \.$score)
            let results = query.liveResults()
            #expect(await eventually { results.isLoaded })
            try await warmUp(results, query, db: db)

            // Hold the only reader for a while.
            let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = try? db.read { () -> Int in
                    entered.signal()
                    release.wait()
                    return 0
                }
                done.signal()
            }
            try await waitForSignal(entered, seconds: 5)
            try await db.execute("UPDATE live_item SET memo = 'while busy' WHERE name = 'b'")
            try await Task.sleep(nanoseconds: 300_000_000)     // the fetch times out, then retries
            release.signal()
            try await waitForSignal(done, seconds: 5)

            let (live, fresh) = try await settle(results, query)
            #expect(live == fresh, "the commit made while the readers were busy was lost")
            results.cancel()
        }
    }

    // MARK: Lifecycle

    /// `LiveResults.cancel()` promises that nothing changes the elements from then on. A delivery
    /// whose doorbell rang before `cancel()` (the task already resumed, waiting for the main
    /// actor) is still applied: objects are changed and `elements` assigned after `cancel()`.
    @Test func reviewNothingChangesAfterCancel() async throws {
        try await withLiveResultsDB { db, _ in
            try addItem("a", score: 1)
            let results = LiveItem.all.order(by: \.$score).liveResults()
            #expect(await eventually { results.isLoaded })
            let a = try #require(results.elements.first)

            try await db.execute("UPDATE live_item SET name = 'changed' WHERE id = ?", [a.id])
            try await db.execute("INSERT INTO live_item (name, score, shown, memo) VALUES ('new', 2, 1, '')")
            // Keep the main actor busy while the fetch delivers and rings.
            usleep(500_000)
            results.cancel()
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(a.name == "a", "the object was changed after cancel()")
            #expect(results.elements.count == 1, "elements were assigned after cancel()")
        }
    }
}
