import CSQLite
import Foundation
import Testing
@testable import ActiveObjects

/// Raw SQL runs where its state is (API §15): on a reader only when it is read-only and reads
/// no connection state; everything else on the writer, exactly as with one connection. On a
/// file database with the default options (WAL, readers), where the difference shows.
@Suite struct RawSQLRoutingTests {
    static func open(_ folder: borrowing TemporaryDirectory) throws -> Database {
        let db = try Database(path: folder.path("routing.sqlite"))
        #expect(db.usesReaderConnections)
        try db.execute("CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        try db.execute("CREATE TABLE other (id INTEGER PRIMARY KEY, x INTEGER)")
        return db
    }

    @Test func lastInsertRowIDAndChangesAnswerForTheWriterNotAReader() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        try db.execute("INSERT INTO note(body) VALUES (?)", ["hi"])
        try db.execute("INSERT INTO note(body) VALUES (?)", ["there"])
        #expect(db.lastInsertedRowID == 2)
        #expect(try db.scalar("SELECT last_insert_rowid()") as Int64? == 2)
        try db.execute("UPDATE note SET body = body || '!'")
        #expect(db.changes == 2)
        #expect(try db.scalar("SELECT changes()") as Int? == 2)
        #expect(try db.scalar("SELECT total_changes()") as Int? == 4)
        #expect(try db.rows("SELECT last_insert_rowid() AS id")[0]["id"] as Int64 == 2)
    }

    /// Synchronous: "this thread" means the thread of the calls (an async test may resume on
    /// another thread at each `await`).
    @Test func lastInsertedRowIDIsKeptPerThread() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        #expect(db.lastInsertedRowID == 0, "no insert yet on this thread")
        try db.execute("INSERT INTO note(body) VALUES ('mine')")
        let mine = db.lastInsertedRowID
        #expect(mine == 1)
        // Another thread inserts twice into another table: this thread's answers do not move.
        let theirs = Locked<(Int64, Int64?)>((0, nil))
        let done = DispatchSemaphore(value: 0)
        Thread {
            defer { done.signal() }
            try? db.execute("INSERT INTO other(x) VALUES (1)")
            try? db.execute("INSERT INTO other(x) VALUES (2)")
            let answer = (db.lastInsertedRowID, try? db.scalar("SELECT last_insert_rowid()") as Int64?)
            theirs.withLock { $0 = (answer.0, answer.1 ?? nil) }
        }.start()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(theirs.current.0 == 2 && theirs.current.1 == 2)
        #expect(db.lastInsertedRowID == mine)
        #expect(try db.scalar("SELECT last_insert_rowid()") as Int64? == mine)
        // An INSERT that SQLite ignored leaves it as it was.
        try db.execute("INSERT OR IGNORE INTO note(id, body) VALUES (1, 'dup')")
        #expect(db.changes == 0)
        #expect(db.lastInsertedRowID == mine)
    }

    /// A database opened where a closed one lived (the same address) starts with no facts of
    /// this thread: they are kept by the database's serial number, never reused.
    @Test func aNewDatabaseNeverInheritsTheFactsOfAFreedOne() throws {
        var addresses = Set<ObjectIdentifier>()
        var reused = 0
        for round in 0..<50 {
            let db = try Database.inMemory()
            if !addresses.insert(ObjectIdentifier(db)).inserted { reused += 1 }
            #expect(db.lastInsertedRowID == 0 && db.changes == 0, "round \(round): facts of another database")
            try db.execute("CREATE TABLE t (x)")
            try db.execute("INSERT INTO t VALUES (1), (2), (3)")
            #expect(db.lastInsertedRowID == 3 && db.changes == 3)
            try db.close()
        }
        print("RELIABILITY routing: \(reused) of 50 databases reused a freed database's address")
    }

    @Test func statementsThatWriteRunOnTheWriterAndReturnTheirRows() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        let made = try db.rows("INSERT INTO note(body) VALUES ('a'), ('b') RETURNING id")
        #expect(try made.map { try $0["id"] as Int64 } == [1, 2])
        #expect(try db.scalar("SELECT count(*) FROM note") as Int? == 2)
        let updated: Int64? = try db.scalar("UPDATE note SET body = 'c' WHERE id = 2 RETURNING id")
        #expect(updated == 2)
        #expect(db.changes == 1)
        let deleted = try db.rows("DELETE FROM note WHERE id = 1 RETURNING body")
        #expect(try deleted.map { try $0["body"] as String } == ["a"])
        #expect(try db.scalar("SELECT count(*) FROM note") as Int? == 1)
    }

    /// A pragma that sets a connection's value applies where writes happen: a database
    /// limited to a few pages refuses to grow (round 1's disk-full test, on a file).
    @Test func aPragmaSetThroughRowsAppliesToTheWriter() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        let pages: Int = try #require(try db.scalar("PRAGMA page_count"))
        _ = try db.rows("PRAGMA max_page_count = \(pages + 1)")
        #expect(try db.scalar("PRAGMA max_page_count") as Int? == pages + 1)
        var written = 0
        let blob = Data(repeating: 7, count: 4096)
        let error = expectDatabaseError(.full) {
            for _ in 0..<50 {
                try db.execute("INSERT INTO note(body) VALUES (?)", [blob.base64EncodedString()])
                written += 1
            }
        }
        #expect(error != nil)
        #expect(written < 3, "\(written) rows of 5 KiB were written into a database limited to one more page")
    }

    @Test func readOnlyStatementsStayOnReadersAndReadConnectionStateOnTheWriter() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        try db.execute("INSERT INTO note(body) VALUES ('x')")
        // Another thread holds the writer in a transaction for a while: a plain read does not
        // wait for it; a read of the writer's own state does (as with one connection).
        let release = hold(db)
        let start = Date()
        #expect(try db.scalar("SELECT count(*) FROM note") as Int? == 1)
        #expect(try db.rows("PRAGMA table_info(note)").count == 2, "a schema pragma reads the file: a reader")
        #expect(try db.scalar("SELECT count(*) FROM pragma_table_info('note')") as Int? == 2)
        #expect(Date().timeIntervalSince(start) < 1, "a read-only statement waited for the writer")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { release() }
        let waited = Date()
        #expect(try db.scalar("SELECT changes()") as Int? != nil)
        #expect(Date().timeIntervalSince(waited) >= 0.2, "changes() ran on a reader")
    }

    @Test func connectionStateReadsInsideReadRunOnTheWriterAndWritesStayRefused() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        try db.execute("INSERT INTO note(body) VALUES ('x')")
        let (count, rowID): (Int?, Int64?) = try db.read {
            (try db.scalar("SELECT count(*) FROM note"), try db.scalar("SELECT last_insert_rowid()"))
        }
        #expect(count == 1 && rowID == 1)
        #expect(throws: ActiveObjectError.self) { try db.read { try db.rows("INSERT INTO note(body) VALUES ('y') RETURNING id") } }
        #expect(throws: ActiveObjectError.self) { try db.read { _ = try db.rows("PRAGMA user_version = 3") } }
        #expect(try db.scalar("SELECT count(*) FROM note") as Int? == 1)
        #expect(try db.scalar("PRAGMA user_version") as Int? == 0)
    }

    @Test func theRoutingOfEachStatementKindIsWhatSQLiteReports() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        try db.withWriter { connection in
            func info(_ sql: String) throws -> (StatementInfo, Statement) {
                let statement = try connection.prepare(sql)
                return (statement.info, statement)
            }
            for sql in ["SELECT * FROM note", "SELECT count(*) FROM note", "PRAGMA table_info(note)",
                        "SELECT * FROM pragma_index_list('note')", "PRAGMA schema_version", "PRAGMA user_version",
                        "PRAGMA integrity_check", "WITH x AS (SELECT 1) SELECT * FROM x"] {
                let (statementInfo, statement) = try info(sql)
                #expect(statementInfo.mayRunOnReader(statement), "\(sql) should run on a reader")
            }
            for sql in ["SELECT last_insert_rowid()", "SELECT changes()", "SELECT total_changes() + 1",
                        "PRAGMA max_page_count", "PRAGMA max_page_count = 10", "PRAGMA foreign_keys",
                        "PRAGMA user_version = 4", "PRAGMA data_version", "PRAGMA database_list",
                        "INSERT INTO note(body) VALUES ('a') RETURNING id", "BEGIN", "SAVEPOINT s"] {
                let (statementInfo, statement) = try info(sql)
                #expect(!statementInfo.mayRunOnReader(statement), "\(sql) must run on the writer")
            }
        }
    }

    /// `isClosed` (and a cursor's `next()` past its end, which asks it) answers at once,
    /// whatever another thread is doing with the writer.
    @Test func isClosedAnswersAtOnceWhileAnotherThreadHoldsATransaction() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            try RoutedNote.createTable()
            let note = RoutedNote()
            note.body = "x"
            try note.save()
            let cursor = try RoutedNote.all.cursor()
            #expect(try cursor.next()?.body == "x")
            #expect(try cursor.next() == nil)
            let release = hold(db)
            defer { release() }
            let start = Date()
            #expect(!db.isClosed)
            #expect(try cursor.next() == nil)
            #expect(Date().timeIntervalSince(start) < 0.5, "isClosed waited for another thread's transaction")
        }
    }
}

final class RoutedNote: ModelTestRecord {
    override class var tableName: String { "routed_note" }
    @Column var body = ""
}

/// Runs `body` on a thread of its own (not the cooperative pool) and returns its result.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// The edges of raw SQL routing: writes refused inside `read` whatever connection serves it,
/// statements bound for the writer not waiting for a reader, `ATTACH` on the writer.
@Suite struct RawSQLRoutingEdgeTests {
    @Test(arguments: TestStorage.allCases)
    func writesThroughRowsAndScalarAreRefusedInsideRead(_ storage: TestStorage) throws {
        let (db, folder) = try storage.open()
        defer { try? db.close(); withExtendedLifetime(folder) {} }
        try db.execute("CREATE TABLE t (x INTEGER)")
        #expect(throws: ActiveObjectError.self) { try db.read { try db.rows("INSERT INTO t VALUES (1) RETURNING x") } }
        #expect(throws: ActiveObjectError.self) { try db.read { try db.rows("DELETE FROM t") } }
        #expect(throws: ActiveObjectError.self) { try db.read { _ = try db.scalar("COMMIT") as Int? } }
        #expect(throws: ActiveObjectError.self) {
            try db.transaction { try db.read { _ = try db.rows("INSERT INTO t VALUES (2)") } }
        }
        #expect(try db.scalar("SELECT count(*) FROM t") as Int? == 0)
        // Reads of connection state stay allowed.
        #expect(try db.read { try db.scalar("SELECT changes()") as Int? } != nil)
    }

    /// Every reader held by a long read block on another thread: a statement bound for the
    /// writer runs at once (it is not compiled on a reader first).
    @Test func aStatementForTheWriterDoesNotWaitForAReader() throws {
        let folder = try TemporaryDirectory()
        var options = Database.Options()
        options.maximumReaderCount = 1
        options.busyTimeout = .seconds(2)
        let db = try Database(path: folder.path("busy-readers.sqlite"), options: options)
        defer { try? db.close() }
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER)")
        let release = hold(db, writer: false)
        defer { release() }
        let start = Date()
        let made = try db.rows("INSERT INTO t(x) VALUES (1) RETURNING id")
        #expect(made.count == 1)
        #expect(try db.scalar("SELECT last_insert_rowid()") as Int64? == 1)
        #expect(Date().timeIntervalSince(start) < 1, "a statement for the writer waited for a reader")
    }

    /// A raw read on a fresh database opens a reader rather than take the writer.
    @Test func aRawReadOpensAReaderRatherThanTakeTheWriter() throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("fresh.sqlite"))
        defer { try? db.close() }
        try db.execute("CREATE TABLE t (x INTEGER)")
        #expect(db.readers?.openCount == 0)
        _ = try db.rows("SELECT * FROM t")
        #expect(db.readers?.openCount == 1)
    }

    @Test func attachThroughRowsAttachesToTheWriter() throws {
        let folder = try TemporaryDirectory()
        let other = try Database(path: folder.path("other.sqlite"))
        try other.execute("CREATE TABLE a (x INTEGER)")
        try other.execute("INSERT INTO a VALUES (7)")
        try other.close()
        let db = try Database(path: folder.path("main.sqlite"))
        defer { try? db.close() }
        try db.execute("CREATE TABLE t (x INTEGER)")
        _ = try db.rows("ATTACH DATABASE ? AS aux", [folder.path("other.sqlite")])
        try db.execute("INSERT INTO t SELECT x FROM aux.a")
        #expect(try db.scalar("SELECT x FROM t") as Int? == 7)
        _ = try db.rows("DETACH DATABASE aux")
        #expect(throws: DatabaseError.self) { try db.execute("INSERT INTO t SELECT x FROM aux.a") }
    }
}
