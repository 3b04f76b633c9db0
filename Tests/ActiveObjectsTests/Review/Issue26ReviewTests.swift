import CSQLite
import Foundation
import Testing
@testable import ActiveObjects

/// Review of issue 26 (durability, checkpoints, Litestream): a helper's review found that
/// `checkpoint()` threw errors its documentation did not name; these tests hold the fixed
/// behaviour, and the cases the review confirmed.
@Suite("Issue 26 review", .serialized)
struct Issue26ReviewTests {
    private static func options(readers: Int = 4, busy: Duration = .seconds(1), automatic: Bool = false) -> Database.Options {
        var options = Database.Options()
        options.maximumReaderCount = readers
        options.busyTimeout = busy
        options.checkpointsAutomatically = automatic
        return options
    }

    /// Calls the synchronous API from an async test.
    private static func sync<T>(_ body: () throws -> T) rethrows -> T { try body() }

    /// Runs `body` on a thread of its own and waits for it at most `seconds`.
    private static func onThread<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withTimeout(seconds) {
            try await withCheckedThrowingContinuation { continuation in
                Thread { continuation.resume(with: Result { try body() }) }.start()
            }
        }
    }

    /// Runs `checkpoint(.truncate)` on a thread of its own while another thread holds a
    /// `read {}` block on `db` (table `t`); returns the outcome: "no error", a result code, or
    /// the error.
    private static func truncateWhileAnotherThreadReads(_ db: Database) async throws -> String {
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread {
            _ = try? db.read {
                _ = try db.scalar("SELECT count(*) FROM t") as Int?
                inside.signal()
                _ = release.wait(timeout: .now() + 20)
            }
        }.start()
        defer { release.signal() }
        #expect(inside.wait(timeout: .now() + 10) == .success)
        return try await onThread(20) {
            do { _ = try db.checkpoint(.truncate); return "no error" } catch let error as DatabaseError {
                return "\(error.resultCode)"
            } catch { return "\(error)" }
        }
    }

    // MARK: checkpoint() and a cursor on the connection that checkpoints

    /// A database without a WAL has nothing to checkpoint, even with a cursor open on its one
    /// connection (SQLite itself would answer SQLITE_LOCKED).
    @Test("in memory, with a cursor open: checkpoint() counts 0 frames without asking SQLite")
    func inMemoryWithCursor() throws {
        let db = try Database.inMemory()
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            _ = try seedQueryPeople(count: 5)
            let cursor = try QueryPerson.all.cursor()
            defer { cursor.close() }
            #expect(try cursor.next() != nil)
            var result: Database.CheckpointResult?
            var failure: (any Error)?
            do { result = try db.checkpoint() } catch { failure = error }
            #expect(failure == nil, "checkpoint() threw \(String(describing: failure))")
            #expect(result == Database.CheckpointResult(walFrameCount: 0, checkpointedFrameCount: 0))
        }
    }

    /// With `maximumReaderCount = 0` a cursor reads on the writer; SQLite cannot checkpoint
    /// with a statement of the connection running (SQLITE_LOCKED): a misuse naming the cursor.
    @Test("WAL, maximumReaderCount = 0, a cursor open: checkpoint() is a misuse naming the open cursor, and the cursor goes on")
    func passiveWithCursorOnTheWriter() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("one.sqlite"), options: Self.options(readers: 0))
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            _ = try seedQueryPeople(count: 5)
            let cursor = try QueryPerson.all.cursor()
            defer { cursor.close() }
            #expect(try cursor.next() != nil)
            #expect {
                try db.checkpoint(.passive)
            } throws: { error in
                guard case ActiveObjectError.misuse(let message) = error else { return false }
                return message.contains("cursor")
            }
            var rest = 0
            while try cursor.next() != nil { rest += 1 }
            #expect(rest == 4)
        }
        #expect(try db.checkpoint().walFrameCount > 0)
    }

    // MARK: checkpoint(.passive) while another process checkpoints (Litestream does, every 1,000 pages)

    /// SQLite takes the checkpoint lock without the busy handler: a passive checkpoint while
    /// another connection (Litestream's) checkpoints fails at once with `busy`, as documented.
    @Test("checkpoint(.passive) while another connection checkpoints: busy at once, as documented")
    func passiveWhileAnotherConnectionCheckpoints() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.sqlite")
        let db = try Database(path: path, options: Self.options())
        defer { try? db.close() }
        try Self.sync {
            try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
            try db.execute("INSERT INTO t (v) VALUES (zeroblob(5000))")
        }

        // A reader of another process on an old snapshot...
        var reader: OpaquePointer?
        try #require(sqlite3_open_v2(path, &reader, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close(reader) }
        try #require(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM t;", nil, nil, nil) == SQLITE_OK)
        try Self.sync { try db.execute("INSERT INTO t (v) VALUES (zeroblob(5000))") }
        // ...keeps a FULL checkpoint of a third connection (Litestream's) waiting, holding the
        // checkpoint lock, for 3 s.
        var checkpointer: OpaquePointer?
        try #require(sqlite3_open_v2(path, &checkpointer, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close(checkpointer) }
        sqlite3_busy_timeout(checkpointer, 3000)
        // (A connection opens the WAL on its first read.)
        try #require(sqlite3_exec(checkpointer, "SELECT count(*) FROM t", nil, nil, nil) == SQLITE_OK)
        let handle = RawHandle(checkpointer)
        let starting = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let otherResult = LockedValue<Int32>(-1)
        Thread {
            starting.signal()
            let code = sqlite3_wal_checkpoint_v2(handle.pointer, nil, SQLITE_CHECKPOINT_FULL, nil, nil)
            otherResult.withLock { $0 = code }
            finished.signal()
        }.start()
        #expect(starting.wait(timeout: .now() + 10) == .success)
        try await Task.sleep(nanoseconds: 500_000_000)

        var failure: (any Error)?
        do { _ = try Self.sync { try db.checkpoint(.passive) } } catch { failure = error }
        #expect((failure as? DatabaseError)?.resultCode == .busy, "checkpoint(.passive) gave \(String(describing: failure))")
        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(otherResult.withLock { $0 } == SQLITE_BUSY, "precondition: the other checkpoint waited for the reader")
        sqlite3_exec(reader, "COMMIT", nil, nil, nil)
    }

    // MARK: .truncate against the library's own readers: busy after the timeout, no hang

    @Test("checkpoint(.truncate) while a read {} block on another thread holds a snapshot: busy after the busy timeout")
    func truncateAgainstAnotherThreadsReadBlock() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("app.sqlite"), options: Self.options())
        defer { try? db.close() }
        try Self.sync {
            try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
            for _ in 0..<20 { try db.execute("INSERT INTO t (v) VALUES (zeroblob(5000))") }
        }
        let started = Date()
        #expect(try await Self.truncateWhileAnotherThreadReads(db) == "\(ResultCode.busy)")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test("checkpoint(.truncate) while this thread's own cursor holds a reader's snapshot: busy after the busy timeout")
    func truncateAgainstOwnCursor() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("app.sqlite"), options: Self.options())
        defer { try? db.close() }
        let outcome: String = try await Self.onThread(20) {
            try ModelTestDB.$current.withValue(db) {
                _ = try seedQueryPeople(count: 5)
                let cursor = try QueryPerson.all.cursor()
                defer { cursor.close() }
                _ = try cursor.next()
                do { _ = try db.checkpoint(.truncate); return "no error" } catch let error as DatabaseError {
                    return "\(error.resultCode)"
                }
            }
        }
        #expect(outcome == "\(ResultCode.busy)")
    }

    // MARK: readOnly

    @Test("checkpoint() on a readOnly database: a misuse, and the database stays usable")
    func readOnlyCheckpoint() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.sqlite")
        let writer = try Database(path: path, options: Self.options())
        defer { try? writer.close() }
        try writer.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        try writer.execute("INSERT INTO t DEFAULT VALUES")
        var options = Self.options()
        options.readOnly = true
        let reader = try Database(path: path, options: options)
        defer { try? reader.close() }
        #expect {
            try reader.checkpoint()
        } throws: { error in
            guard case ActiveObjectError.misuse(let message) = error else { return false }
            return message.contains("readOnly")
        }
        #expect(try reader.scalar("SELECT count(*) FROM t") as Int? == 1)
        #expect(try writer.scalar("PRAGMA integrity_check") as String? == "ok")
    }

    /// The re-review: the journal mode was the one read at open, so a database switched to WAL
    /// by raw SQL later counted 0 frames and was not checkpointed.
    @Test("a database switched to WAL by raw SQL after it opened is checkpointed")
    func journalModeChangedByRawSQL() throws {
        let dir = try TemporaryDirectory()
        var options = Self.options()
        options.journalMode = .delete
        let db = try Database(path: dir.path("app.sqlite"), options: options)
        defer { try? db.close() }
        #expect(try db.checkpoint() == Database.CheckpointResult(walFrameCount: 0, checkpointedFrameCount: 0))
        #expect(try db.scalar("PRAGMA journal_mode = WAL") as String? == "wal")
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
        try db.execute("INSERT INTO t (v) VALUES (zeroblob(20000))")
        let result = try db.checkpoint(.truncate)
        #expect(result.walFrameCount == 0)
        #expect(FileManager.default.fileExists(atPath: dir.path("app.sqlite-wal")))
        let size = (try FileManager.default.attributesOfItem(atPath: dir.path("app.sqlite-wal"))[.size] as? Int) ?? -1
        #expect(size == 0)
    }

    // MARK: what holds (checked)

    @Test("options reach the writer of a template-copied database")
    func templateCopyAppliesOptions() throws {
        let dir = try TemporaryDirectory()
        let template = dir.path("template.sqlite")
        let seed = try Database(path: template)
        try seed.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        try seed.close()
        var options = Self.options()
        options.durability = .normal
        let db = try Database(path: dir.path("copy.sqlite"), copyingTemplateAt: template, options: options)
        defer { try? db.close() }
        #expect(try db.scalar("PRAGMA synchronous") as Int? == 1)
        #expect(try db.scalar("PRAGMA wal_autocheckpoint") as Int? == 0)
        #expect(try db.scalar("PRAGMA journal_mode") as String? == "wal")
    }

    @Test("checkpoint() with a raw BEGIN open on the thread: misuse, and the transaction stays open")
    func rawBeginOnTheThread() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("app.sqlite"), options: Self.options())
        defer { try? db.close() }
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        try db.execute("BEGIN")
        try db.execute("INSERT INTO t DEFAULT VALUES")
        #expect(throws: ActiveObjectError.self) { try db.checkpoint() }
        try db.execute("COMMIT")
        #expect(try db.scalar("SELECT count(*) FROM t") as Int? == 1)
        #expect(try db.checkpoint(.truncate).walFrameCount == 0)
    }

    @Test("maximumReaderCount = 0: checkpoint(.truncate) while a read {} block on another thread holds the one connection: busy after the timeout")
    func truncateAgainstReadBlockOnTheOnlyConnection() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("app.sqlite"), options: Self.options(readers: 0))
        defer { try? db.close() }
        try Self.sync {
            try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
            try db.execute("INSERT INTO t (v) VALUES (zeroblob(5000))")
        }
        #expect(try await Self.truncateWhileAnotherThreadReads(db) == "\(ResultCode.busy)")
    }
}

/// A raw SQLite handle handed to another task in a test (the test owns its lifetime).
private struct RawHandle: @unchecked Sendable {
    let pointer: OpaquePointer?
    init(_ pointer: OpaquePointer?) { self.pointer = pointer }
}
