import Dispatch
import Foundation
import Testing
@testable import ActiveObjects

final class EdgeItem: ModelTestRecord {
    @Column var name = ""
}

/// A natural key: saving one looks up the table's layout (rowid or not) once.
final class EdgeCode: ModelTestRecord {
    override class var primaryKey: String { "code" }
    @Column var code = ""
}

/// The reader pool's edges: connection
/// state only the writer has, `close()` while a walk's body waits for the closing thread, a
/// cursor inside `db.read`, writes that must not wait for a reader, `isInTransaction` in a read.
@Suite struct ReaderPoolEdgeTests {
    private static func seed(_ count: Int) throws {
        try EdgeItem.createTable()
        for index in 0..<count {
            let item = EdgeItem()
            item.name = "item \(index)"
            try item.save()
        }
    }

    @Test func tempTablesAndAttachedDatabasesAreReadWhereTheyExist() throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("main.sqlite"))
        defer { try? db.close() }
        #expect(db.usesReaderConnections)
        try db.execute("CREATE TABLE t (x INTEGER)")
        try db.execute("INSERT INTO t VALUES (1)")
        #expect(try db.scalar("SELECT count(*) FROM t") as Int? == 1)   // on a reader
        try db.execute("CREATE TEMP TABLE scratch (x INTEGER)")
        try db.execute("INSERT INTO scratch VALUES (7)")
        #expect(try db.scalar("SELECT x FROM scratch") as Int? == 7)
        // A read block is never run twice: no retry there (the reader has no TEMP table).
        var runs = 0
        #expect(throws: DatabaseError.self) { try db.read { runs += 1; return try db.rows("SELECT x FROM scratch") } }
        #expect(runs == 1)
        let other = try Database(path: folder.path("other.sqlite"))
        try other.execute("CREATE TABLE u (y TEXT)")
        try other.execute("INSERT INTO u VALUES ('attached')")
        try other.close()
        try db.execute("ATTACH DATABASE ? AS aux", [folder.path("other.sqlite")])
        #expect(try db.scalar("SELECT y FROM aux.u") as String? == "attached")
        #expect(try db.rows("SELECT x FROM t").count == 1)
        // Other reads stay on the readers: they do not wait for another thread's transaction.
        let inside = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? db.transaction {
                try db.execute("INSERT INTO t VALUES (2)")
                inside.signal()
                _ = release.wait(timeout: .now() + 10)
            }
            done.signal()
        }
        #expect(inside.wait(timeout: .now() + 10) == .success)
        let begin = Date()
        #expect(try db.scalar("SELECT count(*) FROM t") as Int? == 1)
        #expect(Date().timeIntervalSince(begin) < 1, "a plain read waited for the transaction")
        release.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(try db.scalar("SELECT count(*) FROM t") as Int? == 2)
    }

    /// A walk's body that waits for the thread calling `close()` deadlocked: close() waited for
    /// the walk's reader, the walk for the closing thread.
    @Test func closeDoesNotWaitForAWalkWhoseBodyIsRunning() throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("walk.sqlite"))
        try ModelTestDB.$current.withValue(db) { try Self.seed(50) }
        let started = DispatchSemaphore(value: 0)
        let closed = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let outcome = LockedBox<String>("running")
        Thread.detachNewThread {
            do {
                try ModelTestDB.$current.withValue(db) {
                    var rows = 0
                    try EdgeItem.all.each { _ in
                        rows += 1
                        if rows == 1 {
                            started.signal()
                            // The body waits for the closing thread, as a hop to it would.
                            _ = closed.wait(timeout: .now() + 10)
                        }
                    }
                }
                outcome.set("finished without an error")
            } catch ActiveObjectError.databaseClosed {
                outcome.set("databaseClosed")
            } catch {
                outcome.set("\(error)")
            }
            finished.signal()
        }
        #expect(started.wait(timeout: .now() + 10) == .success)
        let begin = Date()
        try db.close()
        #expect(Date().timeIntervalSince(begin) < 5, "close() waited for the walk's body")
        closed.signal()
        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(outcome.value == "databaseClosed")
        #expect(throws: ActiveObjectError.self) { _ = try db.scalar("SELECT 1") as Int? }
    }

    @Test func aCursorInsideReadReadsTheBlocksSnapshot() throws {
        try withModelFileDB { db, _ in
            try Self.seed(3)
            #expect(db.usesReaderConnections)
            let (counted, walked) = try db.read { () -> (Int, Int) in
                let counted = try EdgeItem.countAll()
                // Another thread commits a row inside the block.
                let committed = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    ModelTestDB.$current.withValue(db) {
                        let item = EdgeItem()
                        item.name = "late"
                        try? item.save()
                    }
                    committed.signal()
                }
                _ = committed.wait(timeout: .now() + 10)
                let cursor = try EdgeItem.all.cursor()
                var walked = 0
                while try cursor.next() != nil { walked += 1 }
                return (counted, walked)
            }
            #expect(counted == 3 && walked == 3, "the cursor saw \(walked) rows, the block \(counted)")
            #expect(try EdgeItem.countAll() == 4)
        }
    }

    @Test func aCursorOpenedInReadIsClosedWhenTheBlockEnds() throws {
        try withModelFileDB { db, _ in
            try Self.seed(3)
            let cursor = try db.read { try EdgeItem.all.cursor() }
            #expect(throws: ActiveObjectError.self) { _ = try cursor.next() }
            // Its connection went back to the pool, healthy.
            #expect(try EdgeItem.countAll() == 3)
        }
    }

    /// Another thread waited for the block's connection (held until the block ends): a
    /// deadlock if the block waited for that thread.
    @Test func aCursorOfAReadBlockRefusesAnotherThread() throws {
        try withModelFileDB { db, _ in
            try Self.seed(3)
            let outcome = LockedBox<String>("not run")
            try db.read {
                let cursor = try EdgeItem.all.cursor()
                let done = DispatchSemaphore(value: 0)
                nonisolated(unsafe) let shared = cursor     // the test's deliberate misuse
                Thread.detachNewThread {
                    do {
                        _ = try shared.next()
                        outcome.set("read a row")
                    } catch ActiveObjectError.misuse {
                        outcome.set("misuse")
                    } catch {
                        outcome.set("\(error)")
                    }
                    done.signal()
                }
                #expect(done.wait(timeout: .now() + 5) == .success, "the other thread waited for the block")
                #expect(try cursor.next() != nil, "the block's own thread still reads it")
            }
            #expect(outcome.value == "misuse")
        }
    }

    /// Saving a natural-key model looks the table's layout up; that lookup waited for the only
    /// reader, held by a cursor, before the write could start.
    @Test func aWriteDoesNotWaitForAReaderToLookATableUp() throws {
        let folder = try TemporaryDirectory()
        var options = Database.Options()
        options.maximumReaderCount = 1
        options.busyTimeout = .seconds(3)
        let db = try Database(path: folder.path("layout.sqlite"), options: options)
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            try Self.seed(3)
            try EdgeCode.createTable()
            let cursor = try EdgeItem.all.cursor()       // holds the only reader
            _ = try cursor.next()
            try db.execute("CREATE INDEX edge_item_name ON edge_item(name)")   // layouts forgotten
            let code = EdgeCode()
            code.code = "A1"
            let begin = Date()
            try code.save()
            #expect(Date().timeIntervalSince(begin) < 1.5, "the save waited for the reader")
            cursor.close()
            #expect(try EdgeCode.find(key: "A1") != nil)
        }
    }

    @Test(arguments: [0, 4])
    func isInTransactionIsFalseInAReadBlock(readers: Int) throws {
        let folder = try TemporaryDirectory()
        var options = Database.Options()
        options.maximumReaderCount = readers
        let db = try Database(path: folder.path("flag.sqlite"), options: options)
        defer { try? db.close() }
        #expect(db.usesReaderConnections == (readers > 0))
        try db.execute("CREATE TABLE t (x INTEGER)")
        let inRead = try db.read { db.isInTransaction }
        #expect(!inRead)
        let inTransaction = try db.transaction { db.isInTransaction }
        let readInTransaction = try db.transaction { try db.read { db.isInTransaction } }
        #expect(inTransaction && readInTransaction)
        try db.execute("BEGIN")
        let readInRawTransaction = try db.read { db.isInTransaction }
        try db.execute("COMMIT")
        #expect(readInRawTransaction)
    }
}

/// A value shared between a test and a thread it starts.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    // Safety: `stored` is only touched while `lock` is held.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
}
