import CSQLite
import Foundation
import Testing
@testable import ActiveObjects

/// What a replication tool such as Litestream relies on (issue 26): commits synced to the disk
/// by default, automatic checkpoints that never restart the WAL under another process's reader,
/// a way to hand checkpoints to that process, and explicit checkpoints.
@Suite("Durability and checkpoints")
struct DurabilityAndCheckpointTests {
    /// A table of 4 KiB blobs: each inserted row adds about one page to the WAL.
    private static func makeBlobs(_ db: Database) throws {
        try db.execute("CREATE TABLE blob (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
    }

    /// Inserts `count` rows of 4 KiB, each in its own transaction (autocommit).
    private static func insertBlobs(_ db: Database, _ count: Int) throws {
        let data = Data(repeating: 0xAB, count: 4096)
        for _ in 0..<count { try db.execute("INSERT INTO blob(data) VALUES (?)", [data]) }
    }

    private static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1
    }

    /// The WAL header's two salts: they change when the WAL is restarted (written again from
    /// its beginning), and only then.
    private static func walSalts(_ path: String) throws -> Data {
        let header = try #require(FileHandle(forReadingAtPath: path + "-wal")).readData(ofLength: 32)
        try #require(header.count == 32)
        return header.subdata(in: 16..<24)
    }

    @Test("by default, the writer of a file syncs every commit (synchronous = FULL) and checkpoints after 1,000 pages")
    func defaults() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("app.sqlite"))
        #expect(Database.Options().durability == .full)
        #expect(Database.Options().checkpointsAutomatically)
        // PRAGMAs run on the writer, the connection that commits.
        #expect(try db.scalar("PRAGMA synchronous") as Int? == 2)
        #expect(try db.scalar("PRAGMA wal_autocheckpoint") as Int? == 1000)
        #expect(try db.scalar("PRAGMA journal_mode") as String? == "wal")
    }

    @Test("durability .normal sets synchronous = NORMAL, in WAL and rollback-journal modes")
    func normalDurability() throws {
        let dir = try TemporaryDirectory()
        var options = Database.Options()
        options.durability = .normal
        let db = try Database(path: dir.path("wal.sqlite"), options: options)
        #expect(try db.scalar("PRAGMA synchronous") as Int? == 1)
        options.journalMode = .delete
        let journal = try Database(path: dir.path("journal.sqlite"), options: options)
        #expect(try journal.scalar("PRAGMA synchronous") as Int? == 1)
        options.durability = .full
        let full = try Database(path: dir.path("full.sqlite"), options: options)
        #expect(try full.scalar("PRAGMA synchronous") as Int? == 2)
    }

    @Test("with automatic checkpoints the WAL stays near 1,000 pages; without, it grows until checkpoint(.truncate) empties it")
    func automaticCheckpointsOrNot() throws {
        let dir = try TemporaryDirectory()
        let automatic = try Database(path: dir.path("auto.sqlite"))
        try Self.makeBlobs(automatic)
        try Self.insertBlobs(automatic, 2_500)          // ~10 MB of pages
        #expect(Self.fileSize(dir.path("auto.sqlite-wal")) < 6 << 20)

        var options = Database.Options()
        options.checkpointsAutomatically = false
        let manual = try Database(path: dir.path("manual.sqlite"), options: options)
        #expect(try manual.scalar("PRAGMA wal_autocheckpoint") as Int? == 0)
        try Self.makeBlobs(manual)
        try Self.insertBlobs(manual, 2_500)
        let grown = Self.fileSize(dir.path("manual.sqlite-wal"))
        #expect(grown > 10 << 20)
        #expect(Self.fileSize(dir.path("manual.sqlite")) < 1 << 20)   // nothing copied yet

        let passive = try manual.checkpoint()
        #expect(passive.walFrameCount >= 2_500)
        #expect(passive.checkpointedFrameCount == passive.walFrameCount)
        #expect(Self.fileSize(dir.path("manual.sqlite")) > 10 << 20)
        #expect(Self.fileSize(dir.path("manual.sqlite-wal")) == grown)  // passive never truncates

        let truncated = try manual.checkpoint(.truncate)
        #expect(truncated.walFrameCount == 0)
        #expect(Self.fileSize(dir.path("manual.sqlite-wal")) == 0)
        #expect(try manual.scalar("SELECT count(*) FROM blob") as Int? == 2_500)
    }

    @Test("another process's read transaction (Litestream's) keeps the WAL from being restarted or truncated, closing included")
    func noRestartUnderAnotherReader() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.sqlite")
        let db = try Database(path: path)
        try Self.makeBlobs(db)
        try Self.insertBlobs(db, 10)

        // What Litestream does: its own connection holds a read transaction open.
        var outside: OpaquePointer?
        try #require(sqlite3_open_v2(path, &outside, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close(outside) }
        try #require(sqlite3_exec(outside, "BEGIN; SELECT count(*) FROM blob;", nil, nil, nil) == SQLITE_OK)
        let salts = try Self.walSalts(path)

        // Well past the automatic checkpoint's 1,000 pages, and past the WAL size limit.
        try Self.insertBlobs(db, 2_000)
        #expect(try Self.walSalts(path) == salts)
        #expect(Self.fileSize(path + "-wal") > 8 << 20)
        // Closing the database does not checkpoint the WAL away under the reader either.
        try db.close()
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(try Self.walSalts(path) == salts)
        #expect(Self.fileSize(path + "-wal") > 8 << 20)

        // Once the reader is done, the next writer's checkpoints restart the WAL: the salts
        // above would have changed had anything restarted it.
        try #require(sqlite3_exec(outside, "COMMIT", nil, nil, nil) == SQLITE_OK)
        let reopened = try Database(path: path)
        try Self.insertBlobs(reopened, 1_200)
        #expect(try Self.walSalts(path) != salts)
        #expect(try reopened.scalar("SELECT count(*) FROM blob") as Int? == 3_210)
    }

    @Test("a write waits out another process's short write lock (a replication tool writing its bookkeeping)")
    func writeWaitsForAnotherWriter() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.sqlite")
        let db = try Database(path: path)
        try Self.makeBlobs(db)
        var outside: OpaquePointer?
        try #require(sqlite3_open_v2(path, &outside, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close(outside) }
        try #require(sqlite3_exec(outside, "BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER);", nil, nil, nil) == SQLITE_OK)
        let handle = UncheckedHandle(outside)
        let released = AtomicFlag()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) {
            released.set()
            sqlite3_exec(handle.pointer, "COMMIT", nil, nil, nil)
        }
        try await withTimeout(20) {
            try await db.execute("INSERT INTO blob(data) VALUES (x'00')")
        }
        #expect(released.isSet)
        #expect(try await db.scalar("SELECT count(*) FROM blob") as Int? == 1)
    }

    @Test("checkpoint(): refused inside a transaction or read block, after close; zero frames without a WAL")
    func checkpointEdges() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("app.sqlite"))
        try Self.makeBlobs(db)
        try Self.insertBlobs(db, 3)
        #expect(throws: ActiveObjectError.self) {
            try db.transaction { try db.checkpoint() }
        }
        #expect(throws: ActiveObjectError.self) {
            try db.read { try db.checkpoint() }
        }
        #expect(try db.scalar("SELECT count(*) FROM blob") as Int? == 3)
        let memory = try Database.inMemory()
        #expect(try memory.checkpoint(.truncate) == Database.CheckpointResult(walFrameCount: 0, checkpointedFrameCount: 0))

        try db.close()
        #expect(throws: ActiveObjectError.databaseClosed) { try db.checkpoint() }
    }

    @Test("checkpoint() async runs on the writer's queue and copies every frame")
    func asyncCheckpoint() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("app.sqlite"))
        try await db.execute("CREATE TABLE blob (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
        try await db.execute("INSERT INTO blob(data) VALUES (zeroblob(10000))")
        let result = try await db.checkpoint(.full)
        #expect(result.walFrameCount > 0)
        #expect(result.checkpointedFrameCount == result.walFrameCount)
    }
}

/// A raw SQLite handle handed to another thread in a test (the test owns its lifetime).
private struct UncheckedHandle: @unchecked Sendable {
    let pointer: OpaquePointer?
    init(_ pointer: OpaquePointer?) { self.pointer = pointer }
}
