import Foundation
import Testing
@testable import ActiveObjects

/// The database the models of this file use; each test sets its own.
private let environmentDatabase = Locked<Database?>(nil)

final class RelEnvNote: ActiveObject {
    override class var database: Database? { environmentDatabase.withLock { $0 } }
    @Column var title: String = ""
    @Column var body: String = ""
    @Column var rank: Int = 0
}

/// Environment faults seen through the models: a full disk, a corrupted file, locks held by
/// another connection or process, read-only files, impossible paths, and closing with an
/// open cursor. Each is a clear thrown error; nothing is half-written; the objects keep
/// their state so that a retry works; the connection stays usable.
@Suite("Environment faults (models)", .serialized)
struct EnvironmentFaultTests {
    static func use(_ db: Database?) { environmentDatabase.withLock { $0 = db } }

    /// Whether `body` threw a DatabaseError whose primary code is one of `codes`.
    static func expectFailure(
        oneOf codes: Set<ResultCode>, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) -> DatabaseError? {
        do {
            try body()
            Issue.record("\(what): expected DatabaseError \(codes), nothing was thrown", sourceLocation: sourceLocation)
        } catch let error as DatabaseError {
            #expect(codes.contains(error.resultCode), "\(what): \(error)", sourceLocation: sourceLocation)
            return error
        } catch {
            Issue.record("\(what): expected DatabaseError \(codes), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    static func snapshot(_ db: Database) throws -> [String] {
        try db.rows("SELECT id, title, body, rank FROM rel_env_note ORDER BY id").map { row in
            "\(try row["id"] as Int64)|\(try row["title"] as String)|\(try row["body"] as String)|\(try row["rank"] as Int)"
        }
    }

    // MARK: Disk full

    @Test(arguments: [Database.JournalMode.wal, .delete])
    func diskFullInTheMiddleOfATransactionOfSavesLeavesNothingAndARetryWorks(mode: Database.JournalMode) throws {
        let folder = try TemporaryDirectory()
        var options = Database.Options()
        options.journalMode = mode
        let db = try Database(path: folder.path("full.sqlite"), options: options)
        Self.use(db)
        defer { Self.use(nil) }
        try RelEnvNote.createTable()
        for rank in 0..<5 {
            let note = RelEnvNote()
            note.title = "before \(rank)"
            note.rank = rank
            try note.save()
        }
        let existing = try #require(try RelEnvNote.find(id: 1))
        let before = try Self.snapshot(db)
        let pages = try count(db, "PRAGMA page_count")
        // Room for a few more pages only: a transaction of 40 saves of 3 KB cannot fit.
        try db.execute("PRAGMA max_page_count = \(pages + 4)")

        let notes = (0..<40).map { index -> RelEnvNote in
            let note = RelEnvNote()
            note.title = "new \(index)"
            note.body = String(repeating: "\(index % 10)", count: 3_000)
            note.rank = 100 + index
            return note
        }
        existing.title = "changed inside the failed transaction"
        let error = expectDatabaseError(.full) {
            try db.transaction {
                try existing.save()
                for note in notes { try note.save() }
            }
        }
        #expect(error != nil)
        #expect(error?.sql != nil, "the error names the statement that failed")
        #expect(!db.isInTransaction)
        // Nothing partial: the table is exactly what it was.
        #expect(try Self.snapshot(db) == before)
        #expect(try RelEnvNote.countAll() == 5)
        // Every object is as it was before the transaction: no id, its changes pending.
        for note in notes {
            let (id, pending) = (note.id, note.hasChanges)
            #expect(id == nil, "\(note.title) kept the id of a rolled-back insert")
            #expect(pending, "\(note.title) lost its pending changes")
        }
        #expect(existing.changedColumns == ["title"], "the rolled-back update is still a pending change")
        #expect(try RelEnvNote.find(id: 1)?.title == "before 0")

        // The connection is usable: reads work, and so does a write that fits.
        #expect(try RelEnvNote.where(\.$rank < 3).count() == 3)
        let integrity: String? = try db.scalar("PRAGMA integrity_check")
        #expect(integrity == "ok")
        // A single save that does not fit fails the same way and keeps id == nil.
        let big = RelEnvNote()
        big.body = String(repeating: "b", count: 200_000)
        expectDatabaseError(.full) { try big.save() }
        #expect(big.id == nil)

        // With room again, the very same objects are saved by a retry.
        try db.execute("PRAGMA max_page_count = 1073741823")
        try db.transaction {
            try existing.save()
            for note in notes { try note.save() }
        }
        try big.save()
        #expect(notes.allSatisfy { $0.id != nil && !$0.hasChanges })
        #expect(try RelEnvNote.countAll() == 5 + notes.count + 1)
        #expect(try RelEnvNote.find(id: 1)?.title == "changed inside the failed transaction")
        for note in notes {
            let stored = try #require(try RelEnvNote.find(id: note.id!))
            #expect(stored.title == note.title && stored.body == note.body && stored.rank == note.rank)
        }
        #expect(Set(notes.compactMap(\.id)).count == notes.count)
        print("RELIABILITY environment disk-full \(mode.rawValue): 40-save transaction refused with SQLITE_FULL, 0 rows partial, retry saved \(notes.count + 1) objects")
    }

    @Test func aRolledBackSavepointRestoresItsObjectsButKeepsTheOuterOnes() throws {
        let db = try Database.inMemory()
        Self.use(db)
        defer { Self.use(nil) }
        try RelEnvNote.createTable()
        let outer = RelEnvNote(), inner = RelEnvNote(), gone = RelEnvNote()
        outer.title = "outer"; inner.title = "inner"; gone.title = "gone"
        try gone.save()
        try db.transaction {
            try outer.save()
            #expect(throws: TestFailure.self) {
                try db.transaction {
                    try inner.save()
                    #expect(try gone.delete())
                    throw TestFailure()
                }
            }
        }
        #expect(outer.id != nil && !outer.hasChanges)
        #expect(inner.id == nil && inner.hasChanges)
        // The delete was undone: the object is saved again, with nothing pending.
        #expect(!gone.hasChanges)
        gone.title = "still here"
        try gone.save()
        #expect(try RelEnvNote.find(id: gone.id!)?.title == "still here")
        try inner.save()
        #expect(try RelEnvNote.countAll() == 3)
    }

    // MARK: Corruption

    @Test(arguments: [UInt8(0x00), 0xA5, 0xFF])
    func aCorruptedFileIsACorruptErrorOnUseNeverACrash(fill: UInt8) throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("corrupt.sqlite")
        let pageSize: Int
        do {
            let db = try Database(path: path)
            Self.use(db)
            try RelEnvNote.createTable()
            try db.transaction {
                for rank in 0..<300 {
                    let note = RelEnvNote()
                    note.title = "note \(rank)"
                    note.body = String(repeating: "x", count: rank % 50)
                    note.rank = rank
                    try note.save()
                }
            }
            pageSize = try count(db, "PRAGMA page_size")
            try db.close()   // the last connection checkpoints the WAL into the file
            Self.use(nil)
        }
        defer { Self.use(nil) }
        var bytes = try fileBytes(path)
        #expect(bytes.count > pageSize * 2)
        bytes.replaceSubrange(pageSize..<(pageSize * 2), with: Data(repeating: fill, count: pageSize))
        try bytes.write(to: URL(fileURLWithPath: path))

        let expected: Set<ResultCode> = [.corrupt, .notADatabase]
        let db: Database
        do {
            db = try Database(path: path)
        } catch let error as DatabaseError {
            // Refusing to open is also a clear answer.
            #expect(expected.contains(error.resultCode), "\(error)")
            return
        }
        Self.use(db)
        var failures = 0
        let operations: [(String, () throws -> Void)] = [
            ("findAll", { _ = try RelEnvNote.findAll() }),
            ("find(id:)", { _ = try RelEnvNote.find(id: 150) }),
            ("countAll", { _ = try RelEnvNote.countAll() }),
            ("where.all", { _ = try RelEnvNote.where(\.$rank > 10).all() }),
            ("each", { try RelEnvNote.all.each { _ in } }),
            ("cursor", { let cursor = try RelEnvNote.all.cursor(); while try cursor.next() != nil {} }),
            ("save", { let note = RelEnvNote(); note.title = "after"; try note.save() }),
            ("delete(where:)", { _ = try RelEnvNote.delete(where: ["rank": 3]) }),
        ]
        for (name, operation) in operations {
            if Self.expectFailure(oneOf: expected, name, operation) != nil { failures += 1 }
        }
        // The connection still answers (PRAGMAs that do not touch the damaged page), and closes.
        #expect(try count(db, "PRAGMA page_size") == pageSize)
        try db.close()
        print("RELIABILITY environment corruption 0x\(String(fill, radix: 16)): \(failures)/\(operations.count) model operations threw corrupt, no crash")
    }

    // MARK: Locks

    @Test func aLockHeldByAnotherConnectionMakesSavesBusyAndTheObjectsRetry() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("locked.sqlite")
        var options = Database.Options()
        options.busyTimeout = .milliseconds(300)
        let db = try Database(path: path, options: options)
        Self.use(db)
        defer { Self.use(nil) }
        try RelEnvNote.createTable()
        let existing = RelEnvNote()
        existing.title = "existing"
        try existing.save()

        let other = try Database(path: path)
        try other.execute("BEGIN EXCLUSIVE")
        try other.execute("INSERT INTO rel_env_note(title) VALUES ('uncommitted')")

        let fresh = RelEnvNote()
        fresh.title = "fresh"
        fresh.rank = 7
        let clock = ContinuousClock()
        let start = clock.now
        expectDatabaseError(.busy) { try fresh.save() }
        #expect(clock.now - start >= .milliseconds(200), "busy before the timeout")
        #expect(fresh.id == nil && fresh.title == "fresh" && fresh.rank == 7 && fresh.hasChanges)
        existing.rank = 42
        expectDatabaseError(.busy) { try existing.save() }
        #expect(existing.changedColumns == ["rank"])
        let batch = (0..<3).map { _ in RelEnvNote() }
        expectDatabaseError(.busy) { try db.transaction { for note in batch { try note.save() } } }
        #expect(batch.allSatisfy { $0.id == nil })
        #expect(!db.isInTransaction)
        // Reads still work in WAL mode while the other connection writes.
        #expect(try RelEnvNote.countAll() == 1)

        try other.execute("ROLLBACK")
        try fresh.save()
        try existing.save()
        try db.transaction { for note in batch { try note.save() } }
        #expect(fresh.id != nil && !existing.hasChanges)
        #expect(try RelEnvNote.find(id: existing.id!)?.rank == 42)
        #expect(try RelEnvNote.countAll() == 5)
        #expect(try count(other, "SELECT count(*) FROM rel_env_note WHERE title = 'uncommitted'") == 0)
    }

    @Test func aLockHeldByAnotherProcessMakesSavesBusyAndTheObjectRetries() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("process-locked.sqlite")
        let marker = folder.path("locked.marker")
        let release = folder.path("release.marker")
        var options = Database.Options()
        options.busyTimeout = .milliseconds(300)
        let db = try Database(path: path, options: options)
        Self.use(db)
        defer { Self.use(nil) }
        try RelEnvNote.createTable()

        async let child = #expect(processExitsWith: .success) {
            [path = path as String, marker = marker as String, release = release as String] in
            let holder = try Database(path: path)
            try holder.execute("BEGIN EXCLUSIVE")
            try holder.execute("INSERT INTO rel_env_note(title) VALUES ('from the child')")
            guard FileManager.default.createFile(atPath: marker, contents: Data()) else { exit(4) }
            // Hold the lock until the parent has seen the busy error (at most a minute).
            var waited = 0
            while !FileManager.default.fileExists(atPath: release) {
                usleep(10_000)
                waited += 1
                if waited > 6_000 { exit(3) }
            }
            try holder.execute("COMMIT")
            try holder.close()
        }

        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: marker), clock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let locked = FileManager.default.fileExists(atPath: marker)
        #expect(locked, "the child never took the lock")

        let note = RelEnvNote()
        note.title = "parent"
        note.rank = 3
        if locked {
            let start = clock.now
            expectDatabaseError(.busy) { try note.save() }
            #expect(clock.now - start >= .milliseconds(200))
            #expect(note.id == nil && note.title == "parent" && note.rank == 3 && note.hasChanges)
        }
        _ = FileManager.default.createFile(atPath: release, contents: Data())
        _ = await child

        try await note.save()
        #expect(note.id != nil && !note.hasChanges)
        #expect(try await RelEnvNote.count(where: ["title": "from the child"]) == 1)
        #expect(try await RelEnvNote.count(where: ["title": "parent"]) == 1)
        print("RELIABILITY environment lock: another process held BEGIN EXCLUSIVE, save busy after 300 ms, retry saved")
    }

    // MARK: Read-only

    @Test(arguments: [Database.JournalMode.wal, .delete])
    func aReadOnlyDatabaseRefusesModelWritesAndChangesNothing(mode: Database.JournalMode) throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("readonly.sqlite")
        var options = Database.Options()
        options.journalMode = mode
        do {
            let writer = try Database(path: path, options: options)
            Self.use(writer)
            try RelEnvNote.createTable()
            for rank in 0..<3 {
                let note = RelEnvNote()
                note.title = "kept \(rank)"
                note.rank = rank
                try note.save()
            }
            try writer.close()
        }
        defer { Self.use(nil) }
        let bytesBefore = try fileBytes(path)

        var readOnly = options
        readOnly.readOnly = true
        let db = try Database(path: path, options: readOnly)
        Self.use(db)
        let before = try Self.snapshot(db)
        #expect(before.count == 3)

        let fresh = RelEnvNote()
        fresh.title = "refused"
        expectDatabaseError(.readOnly) { try fresh.save() }
        #expect(fresh.id == nil && fresh.hasChanges)
        let existing = try #require(try RelEnvNote.find(id: 1))
        existing.title = "changed"
        expectDatabaseError(.readOnly) { try existing.save() }
        #expect(existing.changedColumns == ["title"])
        expectDatabaseError(.readOnly) { _ = try existing.delete() }
        expectDatabaseError(.readOnly) { _ = try RelEnvNote.delete(where: ["rank": 1]) }
        expectDatabaseError(.readOnly) { _ = try RelEnvNote.deleteAll() }
        expectDatabaseError(.readOnly) { try fresh.upsert() }
        expectDatabaseError(.readOnly) { try db.transaction { try fresh.save() } }
        #expect(fresh.id == nil)
        #expect(!db.isInTransaction)

        // Reads work, and nothing changed.
        #expect(try Self.snapshot(db) == before)
        #expect(try RelEnvNote.where(\.$rank >= 1).count() == 2)
        try db.close()
        #expect(try fileBytes(path) == bytesBefore)
    }

    // MARK: Impossible paths

    @Test func aDirectoryOrAMissingFolderAsThePathIsCannotOpenAndCreatesNothing() throws {
        let folder = try TemporaryDirectory()
        let directory = folder.path("a-directory.sqlite")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        for readOnly in [false, true] {
            var options = Database.Options()
            options.readOnly = readOnly
            expectDatabaseError(.cannotOpen) { _ = try Database(path: directory, options: options) }
            expectDatabaseError(.cannotOpen) { _ = try Database(path: folder.path("missing/deeper/db.sqlite"), options: options) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        #expect(try folder.fileNames() == ["a-directory.sqlite"])

        // A template copy into a missing folder is refused too, without a partial file.
        let template = folder.path("template.sqlite")
        do {
            let db = try Database(path: template)
            Self.use(db)
            try RelEnvNote.createTable()
            try db.close()
        }
        Self.use(nil)
        #expect(throws: (any Error).self) {
            _ = try Database(path: folder.path("missing/copy.sqlite"), copyingTemplateAt: template)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("missing")))
        // A model whose database could not be opened has none: a clear error, not a crash.
        #expect(throws: ActiveObjectError.self) { _ = try RelEnvNote.findAll() }
        #expect(throws: ActiveObjectError.self) { try RelEnvNote().save() }
    }

    // MARK: Closing with an open cursor

    @Test func closingTheDatabaseWhileACursorIsOpenFailsTheCursorAndLeaksNoLock() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("cursor.sqlite")
        let db = try Database(path: path)
        Self.use(db)
        defer { Self.use(nil) }
        try RelEnvNote.createTable()
        try db.transaction {
            for rank in 0..<20 {
                let note = RelEnvNote()
                note.rank = rank
                try note.save()
            }
        }
        let cursor = try RelEnvNote.order(by: \.$rank).cursor()
        #expect(try cursor.next()?.rank == 0)
        #expect(try cursor.next()?.rank == 1)
        // A second cursor, not started yet, and an `each` closing the database from inside.
        let idle = try RelEnvNote.all.cursor()

        try db.close()
        #expect(db.isClosed)
        expectActiveObjectError({ _ = try cursor.next() }, matches: \.isDatabaseClosed)
        expectActiveObjectError({ _ = try cursor.next() }, matches: \.isDatabaseClosed)
        expectActiveObjectError({ _ = try idle.next() }, matches: \.isDatabaseClosed)
        cursor.close()
        let note = RelEnvNote()
        expectActiveObjectError({ try note.save() }, matches: \.isDatabaseClosed)
        #expect(note.id == nil)

        // No lock leaked: another connection writes and truncates the whole WAL.
        let other = try Database(path: path)
        try other.execute("INSERT INTO rel_env_note(title, rank) VALUES ('after close', 99)")
        let checkpoint = try other.rows("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(try checkpoint[0][0] as Int == 0, "checkpoint blocked")
        #expect(try count(other, "SELECT count(*) FROM rel_env_note") == 21)
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0)

        // Closing from inside `each` on the same thread: the loop fails cleanly.
        let reopened = try Database(path: path)
        Self.use(reopened)
        var visited = 0
        expectActiveObjectError({
            try RelEnvNote.all.each { _ in
                visited += 1
                if visited == 3 { try reopened.close() }
            }
        }, matches: \.isDatabaseClosed)
        #expect(visited == 3)
        try other.execute("INSERT INTO rel_env_note(title, rank) VALUES ('after each', 100)")
        #expect(try other.rows("PRAGMA wal_checkpoint(TRUNCATE)")[0][0] as Int == 0)
        print("RELIABILITY environment close: cursor and each fail with databaseClosed after close, checkpoint not blocked")
    }
}
