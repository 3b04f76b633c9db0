import Foundation
import Testing
@testable import ActiveObjects

final class HookedChapter: ModelTestRecord {
    override class var tableName: String { "hooked_chapter" }
    @Column var title = ""
    @Column var authorId: Int64? = nil
    var author: BelongsTo<SnapAuthor> { belongsTo(\.$authorId) }

    /// What `didLoad()` runs (set by a test, under a lock: fetches may run on other threads).
    static let onLoad = Locked<(@Sendable (HookedChapter) throws -> Void)?>(nil)
    /// What `didLoad()` threw, if anything (hooks cannot throw).
    static let hookFailure = Locked<(any Error)?>(nil)

    override func didLoad() {
        guard let action = Self.onLoad.current else { return }
        do { try action(self) } catch { Self.hookFailure.withLock { $0 = error } }
    }
}

/// A transaction begun with raw SQL keeps the writer on its thread until a statement of that
/// thread ends it — through `execute`, `rows` or `scalar` alike — and is never kept where it
/// cannot work (an async call's work, a hook inside another call): there it is rolled back and
/// the call refused. On a file database with readers.
@Suite(.serialized) struct RawTransactionTests {
    static func open(_ folder: borrowing TemporaryDirectory, _ options: Database.Options = Database.Options()) throws -> Database {
        var options = options
        options.busyTimeout = .milliseconds(500)
        let db = try Database(path: folder.path("raw.sqlite"), options: options)
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER)")
        return db
    }

    /// Another thread's write, which succeeds only once this thread gave the writer back.
    static func writeElsewhere(_ db: Database) -> Result<Void, any Error> {
        runOnAnotherThread(timeout: 30) { try db.execute("INSERT INTO t(x) VALUES (99)") }
            ?? .failure(TestFailure(message: "the other thread's write did not end"))
    }

    /// An author and a chapter of theirs, with the chapter's `didLoad` hook free.
    @discardableResult
    static func makeChapter() throws -> HookedChapter {
        try SnapAuthor.createTable()
        try HookedChapter.createTable()
        let author = SnapAuthor()
        author.name = "a"
        try author.save()
        let chapter = HookedChapter()
        chapter.title = "one"
        chapter.authorId = author.id
        try chapter.save()
        HookedChapter.hookFailure.withLock { $0 = nil }
        return chapter
    }

    @Test func aTransactionEndedThroughRowsOrScalarGivesTheWriterBack() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        try db.execute("BEGIN")
        try db.execute("INSERT INTO t(x) VALUES (1)")
        #expect(db.isInTransaction)
        _ = try db.rows("COMMIT")
        #expect(!db.isInTransaction)
        #expect(throws: Never.self) { try Self.writeElsewhere(db).get() }

        _ = try db.scalar("SAVEPOINT s") as Int?
        try db.execute("INSERT INTO t(x) VALUES (2)")
        _ = try db.scalar("RELEASE s") as Int?
        #expect(throws: Never.self) { try Self.writeElsewhere(db).get() }
        #expect(try db.scalar("SELECT count(*) FROM t") as Int? == 4)
    }

    @Test func rowsAndScalarThatWriteInsideATransactionKeepTheThreadsFacts() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        let (id, changes, rowID): (Int64, Int, Int64) = try db.transaction {
            let made = try db.rows("INSERT INTO t(x) VALUES (5) RETURNING id")
            return (try made[0]["id"], db.changes, db.lastInsertedRowID)
        }
        #expect(id == 1 && changes == 1 && rowID == 1)
        try db.execute("BEGIN")
        _ = try db.rows("INSERT INTO t(x) VALUES (6) RETURNING id")
        try db.execute("COMMIT")
        #expect(db.lastInsertedRowID == 2)
        #expect(try db.scalar("SELECT last_insert_rowid()") as Int64? == 2)
    }

    /// A hook that begins a transaction during a fetch (a `didLoad` during an `including`
    /// fetch) cannot keep it: it is rolled back and refused, and the writer stays free.
    @Test func aRawBeginInsideAHookDuringAFetchIsRolledBackAndRefused() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            try Self.makeChapter()
            HookedChapter.onLoad.withLock { $0 = { _ in try db.execute("BEGIN") } }
            defer { HookedChapter.onLoad.withLock { $0 = nil } }
            let chapters = try HookedChapter.all.including(\.author).all()
            #expect(chapters.count == 1)
            #expect(HookedChapter.hookFailure.current is ActiveObjectError, "the hook's BEGIN was kept")
            HookedChapter.onLoad.withLock { $0 = nil }
            #expect(!db.isInTransaction)
            try db.execute("INSERT INTO t(x) VALUES (1)")
            #expect(throws: Never.self) { try Self.writeElsewhere(db).get() }
        }
    }

    @Test func anAsyncRawSavepointIsRefusedAndLeavesTheWriterFree() async throws {
        let folder = try TemporaryDirectory()
        let db = try synchronously { try Self.open(folder) }
        defer { try? db.close() }
        await #expect(throws: ActiveObjectError.self) { try await db.execute("SAVEPOINT s") }
        await #expect(throws: ActiveObjectError.self) { try await db.execute("BEGIN") }
        #expect(throws: Never.self) { try Self.writeElsewhere(db).get() }
        try await db.execute("INSERT INTO t(x) VALUES (1)")
        #expect(try await db.scalar("SELECT count(*) FROM t") as Int? == 2)
    }

    /// `isInTransaction` inside a transaction run from a hook during a snapshot fetch.
    @Test func isInTransactionInsideATransactionStartedDuringAFetch() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            try Self.makeChapter()
            let seen = Locked<Bool?>(nil)
            HookedChapter.onLoad.withLock { $0 = { _ in try db.transaction { seen.withLock { $0 = db.isInTransaction } } } }
            defer { HookedChapter.onLoad.withLock { $0 = nil } }
            _ = try HookedChapter.all.including(\.author).all()
            #expect(seen.current == true)
        }
    }

    @Test func aRawTransactionEndedInsideAnotherDatabasesTransactionGivesTheWriterBack() throws {
        let folder = try TemporaryDirectory()
        let a = try Self.open(folder)
        defer { try? a.close() }
        let b = try Database.inMemory()
        defer { try? b.close() }
        try a.execute("BEGIN")
        try a.execute("INSERT INTO t(x) VALUES (1)")
        try b.transaction { try a.execute("COMMIT") }
        #expect(!a.isInTransaction)
        #expect(throws: Never.self) { try Self.writeElsewhere(a).get() }
    }

    /// Commits in batches inside a walk over a transaction begun with raw SQL: an inner
    /// `COMMIT` does not give the writer away while the walk still uses it; another thread's
    /// write waits for the last `COMMIT`, then goes through.
    @Test func commitsInBatchesInsideAWalkKeepTheWriterUntilTheWalkEnds() throws {
        let folder = try TemporaryDirectory()
        var options = Database.Options()
        options.busyTimeout = .seconds(20)
        let db = try Database(path: folder.path("batches.sqlite"), options: options)
        defer { try? db.close() }
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER)")
        try ModelTestDB.$current.withValue(db) {
            try RoutedNote.createTable()
            try db.transaction {
                for index in 0..<40 {
                    let note = RoutedNote()
                    note.body = "\(index)"
                    try note.save()
                }
            }
            let started = DispatchSemaphore(value: 0)
            let other = Locked<Result<Void, any Error>?>(nil)
            try db.execute("BEGIN")
            var walked = 0
            try RoutedNote.all.each { note in
                walked += 1
                note.body += "!"
                try note.save()
                if walked == 1 {
                    Thread {
                        started.signal()
                        let outcome = Result { try db.execute("INSERT INTO t(x) VALUES (1)") }
                        other.withLock { $0 = outcome }
                    }.start()
                    _ = started.wait(timeout: .now() + 10)
                }
                if walked % 5 == 0 {
                    try db.execute("COMMIT")
                    try db.execute("BEGIN")
                }
            }
            try db.execute("COMMIT")
            #expect(walked == 40)
            let deadline = Date().addingTimeInterval(20)
            while other.current == nil && Date() < deadline { usleep(5_000) }
            #expect(throws: Never.self) { try other.current?.get() }
            #expect(try db.scalar("SELECT count(*) FROM t") as Int? == 1)
            #expect(try RoutedNote.count(where: ["body": "0!"]) == 1)
        }
    }

    /// With one connection, a `transaction` run from a hook during a snapshot fetch is one.
    @Test func isInTransactionInATransactionDuringAOneConnectionFetch() throws {
        let db = try Database.inMemory()
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            try Self.makeChapter()
            let seen = Locked<Bool?>(nil)
            HookedChapter.onLoad.withLock { $0 = { _ in try db.transaction { seen.withLock { $0 = db.isInTransaction } } } }
            defer { HookedChapter.onLoad.withLock { $0 = nil } }
            _ = try HookedChapter.all.including(\.author).all()
            #expect(seen.current == true)
        }
    }
}
