import CSQLite
import Foundation
import Testing
@testable import ActiveObjects

/// Hostile files, locks, full disks and what errors say about them.
@Suite struct DatabaseFaultTests {
    @Test func aFileThatIsNotADatabaseIsRefusedAndLeftUntouched() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("notes.sqlite")
        var generator = SystemRandomNumberGenerator()
        let letters = Array("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ\n0123456789".utf8)
        let text = Data((0..<4096).map { _ in letters.randomElement(using: &generator)! })
        try text.write(to: URL(fileURLWithPath: path))

        for readOnly in [false, true] {
            var options = Database.Options()
            options.readOnly = readOnly
            expectDatabaseError(.notADatabase) { _ = try Database(path: path, options: options) }
        }
        // Also when the first thing the caller wants is a write.
        expectDatabaseError(.notADatabase) {
            let db = try Database(path: path)
            try db.execute("CREATE TABLE t(x)")
        }
        #expect(try fileBytes(path) == text)
        #expect(try dir.fileNames() == ["notes.sqlite"])   // no -wal, -shm or -journal
    }

    @Test func aDirectoryCannotBeOpened() throws {
        let dir = try TemporaryDirectory()
        let folder = dir.path("folder.sqlite")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        expectDatabaseError(.cannotOpen) { _ = try Database(path: folder) }
        expectDatabaseError(.cannotOpen) { _ = try Database(path: dir.url.path) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test func aMissingParentFolderCannotBeOpened() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("missing/sub/db.sqlite")
        let error = expectDatabaseError(.cannotOpen) { _ = try Database(path: path) }
        #expect(error?.message.contains(path) == true)
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing")))
    }

    @Test func aCorruptFileThrowsCorrupt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("corrupt.sqlite")
        var options = Database.Options()
        options.journalMode = .delete
        let pageSize: Int
        do {
            let db = try Database(path: path, options: options)
            try db.execute("CREATE TABLE t(x)")
            for i in 0..<50 { try db.execute("INSERT INTO t VALUES (?)", [String(repeating: "v\(i)", count: 100)]) }
            pageSize = try #require(db.scalar("PRAGMA page_size") as Int?)
            try db.close()
        }
        // Overwrite the first page after the header page: the schema table's root is gone.
        var bytes = try fileBytes(path)
        bytes.replaceSubrange(pageSize..<(pageSize * 2), with: Data(repeating: 0xA5, count: pageSize))
        try bytes.write(to: URL(fileURLWithPath: path))
        expectDatabaseError(.corrupt) {
            let db = try Database(path: path, options: options)
            _ = try db.rows("SELECT * FROM t")
        }
    }

    @Test func aLockHeldByAnotherConnectionMakesAWriteBusyAfterTheTimeout() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("locked.sqlite")
        var options = Database.Options()
        let timeout = Duration.milliseconds(200)
        options.busyTimeout = timeout
        let db = try Database(path: path, options: options)
        try db.execute("CREATE TABLE t(x)")
        let other = try Database(path: path, options: options)
        try other.execute("BEGIN EXCLUSIVE")
        try other.execute("INSERT INTO t VALUES ('other')")

        let clock = ContinuousClock()
        let start = clock.now
        let error = expectDatabaseError(.busy) { try db.execute("INSERT INTO t VALUES ('mine')") }
        let waited = clock.now - start
        #expect(error?.sql == "INSERT INTO t VALUES ('mine')")
        // SQLite's busy handler sleeps in steps; allow for its granularity.
        #expect(waited >= timeout * 0.75, "gave up after \(waited)")
        expectDatabaseError(.busy) { try db.transaction { try db.execute("INSERT INTO t VALUES ('mine')") } }
        #expect(!db.isInTransaction)

        try other.execute("ROLLBACK")
        #expect(try count(db, "SELECT count(*) FROM t") == 0)
        #expect(try count(other, "SELECT count(*) FROM t") == 0)
        // Once the lock is gone, writes work again.
        try db.execute("INSERT INTO t VALUES ('mine')")
        #expect(try count(other, "SELECT count(*) FROM t") == 1)
    }

    @Test func databaseErrorDescriptionShowsCodeMessageAndSQLButNoValues() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE account(login TEXT UNIQUE, password TEXT CHECK (length(password) > 100))")
        let secret = "hunter2-\(UUID().uuidString)"
        let sql = "INSERT INTO account(login, password) VALUES (?, ?)"
        let error = try #require(expectDatabaseError(.constraint) { try db.execute(sql, ["joe", secret]) })
        let text = error.description
        #expect(text.contains(String(error.extendedResultCode.rawValue)))
        #expect(text.contains(error.message))
        #expect(text.contains(sql))
        #expect(!text.contains(secret))
        #expect(!error.message.contains(secret))
        #expect(!String(describing: error).contains(secret))
        // The extended code says which constraint failed.
        #expect(error.extendedResultCode.rawValue == SQLITE_CONSTRAINT | (1 << 8))   // SQLITE_CONSTRAINT_CHECK
        #expect(error.extendedResultCode.primary == .constraint)

        try db.execute(sql, ["joe", String(repeating: "x", count: 101)])
        let unique = try #require(expectDatabaseError(.constraint) {
            try db.execute(sql, ["joe", String(repeating: secret, count: 10)])
        })
        #expect(unique.extendedResultCode.rawValue == SQLITE_CONSTRAINT | (8 << 8))  // SQLITE_CONSTRAINT_UNIQUE
        #expect(!unique.description.contains(secret))
        #expect(unique.description.contains("UNIQUE"))
    }

    @Test func resultCodeDescriptionNamesTheCode() {
        #expect(ResultCode.busy.description.contains("5"))
        #expect(ResultCode.busy.description.contains("locked"))
        #expect(ResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8)).primary == .constraint)
    }
}
