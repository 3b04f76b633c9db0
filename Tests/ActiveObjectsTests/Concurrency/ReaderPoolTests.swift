import Foundation
import Testing
@testable import ActiveObjects

/// The database of `PoolNote`: one per test, the suite is serialized.
private let poolDatabase = LockedValue<Database?>(nil)

final class PoolNote: ActiveObject {
    override class var database: Database? { poolDatabase.withLock { $0 } }
    @Column var title = ""
    @Column var rank = 0
}

/// The reader pool: reads on read-only readers beside the writer, read-your-writes, one
/// snapshot per `db.read`, writes refused where they would break a guarantee, and the faults
/// and hostile uses of issue 12.
@Suite(.serialized)
struct ReaderPoolTests {
    /// A WAL file database for `PoolNote`, with the table created.
    static func open(_ folder: borrowing TemporaryDirectory, _ configure: (inout Database.Options) -> Void = { _ in }) throws -> Database {
        var options = Database.Options()
        configure(&options)
        let db = try Database(path: folder.path("pool.sqlite"), options: options)
        poolDatabase.withLock { $0 = db }
        try PoolNote.createTable()
        return db
    }

    /// Waits for `group` off the cooperative pool; false on timeout.
    static func wait(for group: DispatchGroup, timeout: Double) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: group.wait(timeout: .now() + timeout) == .success)
            }
        }
    }

    static func close(_ db: Database) {
        try? db.close()
        poolDatabase.withLock { $0 = nil }
    }

    @Test func fileDatabasesInWALModeReadOnReadersOpenedOnDemand() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder) { $0.maximumReaderCount = 2 }
        defer { Self.close(db) }
        #expect(db.usesReaderConnections)
        #expect(db.readers?.openCount == 0)
        _ = try PoolNote.countAll()
        #expect(db.readers?.openCount == 1)
        // One connection for everything: in memory, 0 readers, or a rollback journal.
        #expect(try Database.inMemory().usesReaderConnections == false)
        var none = Database.Options()
        none.maximumReaderCount = 0
        #expect(try Database(path: folder.path("zero.sqlite"), options: none).usesReaderConnections == false)
        var journal = Database.Options()
        journal.journalMode = .delete
        #expect(try Database(path: folder.path("delete.sqlite"), options: journal).usesReaderConnections == false)
    }

    @Test func aWriteOnAReaderConnectionIsSQLitesReadOnlyError() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        let reader = try #require(try db.readers?.lease(for: ThreadState(), timeout: 1_000_000_000))
        defer { db.readers?.giveBack(reader) }
        let error = expectDatabaseError(.readOnly) {
            try reader.lock.withLock { try reader.execute("INSERT INTO pool_note(title, rank) VALUES ('x', 1)") }
        }
        #expect(error != nil)
        #expect(try PoolNote.countAll() == 0)
    }

    @Test func rowsAndScalarThatWriteRunOnTheWriter() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        let rows = try db.rows("INSERT INTO pool_note(title, rank) VALUES (?, ?) RETURNING id", ["a", 1])
        #expect(rows.count == 1)
        let id: Int64? = try db.scalar("INSERT INTO pool_note(title, rank) VALUES ('b', 2) RETURNING id")
        #expect(id == 2)
        #expect(try PoolNote.countAll() == 2)
    }

    /// Issue 12: 8 threads, each saving then immediately reading back, 100,000 iterations
    /// in all, zero stale reads — with reads on readers and no snapshot API.
    @Test func everyThreadReadsItsOwnWritesAtOnce() async throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        let threads = 8, perThread = 12_500
        let stale = Locked(0), failures = Locked<[String]>([])
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    var note: PoolNote?
                    for i in 0..<perThread {
                        if i % 2 == 0 || note == nil {
                            let fresh = PoolNote()
                            fresh.title = "t\(thread)"
                            fresh.rank = i
                            try fresh.save()
                            note = fresh
                        } else {
                            note!.rank = i
                            try note!.save()
                        }
                        // Read back at once, on a reader connection.
                        let read = try PoolNote.find(id: note!.id!)
                        if read?.rank != i { stale.withLock { $0 += 1 } }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        // Wait without holding a thread of Swift's cooperative pool (other suites need them).
        #expect(await Self.wait(for: group, timeout: 300))
        #expect(failures.current.isEmpty, "\(failures.current.prefix(3))")
        #expect(stale.current == 0)
        #expect(try await PoolNote.countAll() == threads * perThread / 2)
        print("RELIABILITY read-your-writes: \(threads) threads × \(perThread) save-then-read, \(stale.current) stale reads")
    }

    @Test func aReadNeverWaitsForAWriteTransaction() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        try PoolNote().save()
        let inside = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? db.transaction {
                let note = PoolNote()
                note.title = "uncommitted"
                try note.save()
                inside.signal()
                _ = release.wait(timeout: .now() + 20)
            }
            done.signal()
        }
        #expect(inside.wait(timeout: .now() + 10) == .success)
        let started = Date()
        // Reads see the state before the transaction, without waiting for it.
        #expect(try PoolNote.countAll() == 1)
        #expect(try PoolNote.all.pluck(\.$title) == [""])
        #expect(try db.read { try PoolNote.countAll() } == 1)
        #expect(Date().timeIntervalSince(started) < 5)
        release.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(try PoolNote.countAll() == 2)
    }

    @Test func readGivesOneSnapshotWhateverOthersCommit() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        try PoolNote().save()
        let (before, during, after) = try db.read { () -> (Int, Int, Int) in
            let before = try PoolNote.countAll()
            // Another thread commits while the snapshot is open.
            let committed = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                try? PoolNote().save()
                committed.signal()
            }
            #expect(committed.wait(timeout: .now() + 10) == .success)
            let during = try PoolNote.all.count()
            let all = try PoolNote.findAll()
            return (before, during, all.count)
        }
        #expect(before == 1 && during == 1 && after == 1)
        #expect(try PoolNote.countAll() == 2)
    }

    @Test func aWriteInsideReadIsRefusedAndWritesNothing() throws {
        let folder = try TemporaryDirectory()
        for configure in [{ (_: inout Database.Options) in }, { $0.maximumReaderCount = 0 }] {
            let db = try Self.open(folder, configure)
            defer { Self.close(db) }
            let note = PoolNote()
            expectActiveObjectError({ try db.read { try note.save() } }, matches: \.isMisuse)
            #expect(note.id == nil)
            expectActiveObjectError({ try db.read { try db.execute("DELETE FROM pool_note") } }, matches: \.isMisuse)
            expectActiveObjectError({ try db.read { try db.transaction {} } }, matches: \.isMisuse)
            expectActiveObjectError({ _ = try db.read { try PoolNote.deleteAll() } }, matches: \.isMisuse)
            #expect(try PoolNote.countAll() == 0)
            try note.save()
            #expect(try db.read { try PoolNote.countAll() } == 1)
            try db.execute("DROP TABLE pool_note")
            try PoolNote.createTable()
        }
    }

    @Test func aRawBeginKeepsTheWriterOnItsThreadUntilItEnds() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder) { $0.busyTimeout = .milliseconds(200) }
        defer { Self.close(db) }
        try db.execute("BEGIN")
        try db.execute("INSERT INTO pool_note(title, rank) VALUES ('raw', 1)")
        #expect(db.isInTransaction)
        let other = Locked<String?>(nil), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            other.withLock { $0 = db.isInTransaction ? "sees a transaction" : nil }
            do {
                try db.execute("INSERT INTO pool_note(title, rank) VALUES ('other', 2)")
                other.withLock { $0 = "wrote inside another thread's transaction" }
            } catch let error as DatabaseError where error.resultCode == .busy {
            } catch {
                other.withLock { $0 = "\(error)" }
            }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(other.current == nil)
        // Nested transaction calls become savepoints of the raw transaction.
        try db.transaction { try db.execute("INSERT INTO pool_note(title, rank) VALUES ('nested', 3)") }
        try db.execute("COMMIT")
        #expect(!db.isInTransaction)
        #expect(try PoolNote.all.order(by: \.$rank).pluck(\.$title) == ["raw", "nested"])
        // The writer is free again for other threads.
        let wrote = DispatchSemaphore(value: 0)
        Thread.detachNewThread { if (try? db.execute("INSERT INTO pool_note(title) VALUES ('later')")) != nil { wrote.signal() } }
        #expect(wrote.wait(timeout: .now() + 10) == .success)
    }

    @Test func changesAndIsInTransactionArePerThread() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        try db.execute("INSERT INTO pool_note(title) VALUES ('a'), ('b'), ('c')")
        #expect(db.changes == 3)
        let seen = Locked<(Int, Bool)?>(nil), inside = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? db.transaction {
                try db.execute("DELETE FROM pool_note WHERE title = 'a'")
                inside.signal()
                _ = release.wait(timeout: .now() + 10)
            }
            done.signal()
        }
        #expect(inside.wait(timeout: .now() + 10) == .success)
        // Another thread's transaction neither blocks nor changes what this thread sees.
        seen.withLock { $0 = (db.changes, db.isInTransaction) }
        release.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(seen.current?.0 == 3)
        #expect(seen.current?.1 == false)
    }

    @Test func invalidReaderCountsAreRefused() throws {
        let folder = try TemporaryDirectory()
        for count in [-1, 65, Int.max] {
            var options = Database.Options()
            options.maximumReaderCount = count
            expectActiveObjectError({ _ = try Database(path: folder.path("x.sqlite"), options: options) },
                                    matches: \.isInvalidArgument)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("x.sqlite")))
    }

    @Test func readersOpenOnlyUpToTheMaximumAndExtraReadsWait() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder) { $0.maximumReaderCount = 2 }
        defer { Self.close(db) }
        let inside = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchGroup()
        let concurrent = Locked(0), peak = Locked(0)
        for _ in 0..<4 {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                _ = try? db.read {
                    let now = concurrent.withLock { $0 += 1; return $0 }
                    peak.withLock { $0 = Swift.max($0, now) }
                    inside.signal()
                    _ = release.wait(timeout: .now() + 10)
                    concurrent.withLock { $0 -= 1 }
                    return try PoolNote.countAll()
                }
            }
        }
        #expect(inside.wait(timeout: .now() + 10) == .success)
        #expect(inside.wait(timeout: .now() + 10) == .success)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(peak.current == 2)
        for _ in 0..<4 { release.signal() }
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(db.readers?.openCount == 2)
    }

    @Test func aThreadHoldingEveryReaderGetsATemporaryOneInsteadOfWaitingForItself() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder) { $0.maximumReaderCount = 1 }
        defer { Self.close(db) }
        for rank in 0..<3 {
            let note = PoolNote()
            note.rank = rank
            try note.save()
        }
        let cursor = try PoolNote.order(by: \.$rank).cursor()
        #expect(try cursor.next()?.rank == 0)
        // The only reader is held by the cursor, on this thread: no self-deadlock.
        #expect(try PoolNote.countAll() == 3)
        var ranks: [Int] = []
        try PoolNote.all.order(by: \.$rank).each { note throws in
            ranks.append(note.rank)
            #expect(try PoolNote.countAll() == 3)
        }
        #expect(ranks == [0, 1, 2])
        cursor.close()
        #expect(db.readers?.openCount == 1)
    }

    @Test func nestedReadsInsideEachSeeTheWritesTheBodyMade() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        for rank in 0..<5 {
            let note = PoolNote()
            note.rank = rank
            try note.save()
        }
        var counts: [Int] = []
        try PoolNote.all.order(by: \.$rank).each { note in
            let copy = PoolNote()
            copy.rank = note.rank + 100
            try copy.save()
            counts.append(try PoolNote.countAll())
        }
        // The walk read its own snapshot (5 rows); each count saw the copies saved so far.
        #expect(counts == [6, 7, 8, 9, 10])
    }

    @Test func aSynchronousHopToAnotherThreadInsideEachDoesNotDeadlock() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        for _ in 0..<3 { try PoolNote().save() }
        let finished = DispatchSemaphore(value: 0), result = Locked<[Int]>([])
        let queue = DispatchQueue(label: "other")
        Thread.detachNewThread {
            try? PoolNote.all.each { _ in
                let n = queue.sync { (try? PoolNote.countAll()) ?? -1 }
                result.withLock { $0.append(n) }
            }
            finished.signal()
        }
        #expect(finished.wait(timeout: .now() + 10) == .success, "deadlocked")
        #expect(result.current == [3, 3, 3])
    }

    @Test func closeDoesNotWaitForReadsInProgressThenEverythingFailsCleanly() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        for _ in 0..<3 { try PoolNote().save() }
        let cursor = try PoolNote.all.cursor()
        #expect(try cursor.next() != nil)
        let inside = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let readerResult = Locked<Int?>(nil), readerDone = DispatchSemaphore(value: 0), closed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let n = try? db.read { () -> Int in
                inside.signal()
                _ = release.wait(timeout: .now() + 10)
                return try PoolNote.countAll()
            }
            readerResult.withLock { $0 = n }
            readerDone.signal()
        }
        #expect(inside.wait(timeout: .now() + 10) == .success)
        Thread.detachNewThread {
            try? db.close()
            closed.signal()
        }
        // close() does not wait for the read block in progress (whose body may itself be
        // waiting for the closing thread)...
        #expect(closed.wait(timeout: .now() + 5) == .success)
        release.signal()
        #expect(readerDone.wait(timeout: .now() + 10) == .success)
        #expect(readerResult.current == nil, "the block's read after close() failed")
        // ...then every use fails with databaseClosed, cursors included.
        expectActiveObjectError({ _ = try cursor.next() }, matches: \.isDatabaseClosed)
        expectActiveObjectError({ _ = try PoolNote.countAll() }, matches: \.isDatabaseClosed)
        expectActiveObjectError({ try PoolNote().save() }, matches: \.isDatabaseClosed)
        expectActiveObjectError({ _ = try db.read { 1 } }, matches: \.isDatabaseClosed)
    }

    @Test func aReaderThatCannotOpenIsAClearErrorAndTheWriterKeepsWorking() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        try PoolNote().save()
        // The file disappears under the open writer: a new reader cannot open it.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: folder.path("pool.sqlite") + suffix) }
        let error = expectDatabaseError(.cannotOpen) { _ = try PoolNote.countAll() }
        #expect(error?.message.contains("pool.sqlite") == true)
        // Nothing is lost on the writer's side, and the pool is not wedged.
        try PoolNote().save()
        expectDatabaseError(.cannotOpen) { _ = try PoolNote.countAll() }
        #expect(db.readers?.openCount == 0)
    }

    @Test func readersSeeASchemaChangedByTheWriterDespiteCachedStatements() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        try db.execute("INSERT INTO pool_note(title, rank) VALUES ('a', 1)")
        #expect(try db.rows("SELECT * FROM pool_note")[0].columnNames.count == 3)
        try db.execute("ALTER TABLE pool_note ADD COLUMN extra TEXT DEFAULT 'x'")
        let row = try db.rows("SELECT * FROM pool_note")[0]
        #expect(row.columnNames.count == 4)
        #expect(try row["extra"] as String == "x")
        try db.execute("DROP TABLE pool_note")
        expectDatabaseError(.error) { _ = try db.rows("SELECT * FROM pool_note") }
    }

    /// A long reader holds back checkpoints (the WAL grows meanwhile) but never blocks the
    /// writer; once it ends, the WAL is checkpointed and reused or trimmed.
    @Test func aLongReaderNeverBlocksWritersAndTheWALIsReusedAfterIt() throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        let wal = folder.path("pool.sqlite") + "-wal"
        func walSize() -> Int { ((try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int) ?? 0 }
        let filler = String(repeating: "x", count: 2_000)
        for rank in 0..<10 {
            let note = PoolNote()
            note.rank = rank
            try note.save()
        }
        let cursor = try PoolNote.all.cursor()
        #expect(try cursor.next() != nil)
        // 3,000 autocommitted writes (about 6 MB) while the cursor holds its snapshot.
        let started = Date()
        for rank in 0..<3_000 {
            let note = PoolNote()
            note.title = filler
            note.rank = rank
            try note.save()
        }
        #expect(Date().timeIntervalSince(started) < 60)
        let grown = walSize()
        #expect(grown > 4_000_000, "the WAL could not be checkpointed past the reader: \(grown) bytes")
        cursor.close()
        for _ in 0..<200 { try PoolNote().save() }
        let after = walSize()
        #expect(after <= Database.walSizeLimit, "WAL still \(after) bytes after the reader ended (was \(grown))")
        print("RELIABILITY long reader: WAL grew to \(grown) bytes under a held cursor, \(after) bytes after it ended")
    }

    @Test func threadsReadingInsideTheirOwnWalksDoNotWaitForEachOther() throws {
        let folder = try TemporaryDirectory()
        var options = Database.Options()
        options.maximumReaderCount = 2
        options.busyTimeout = .seconds(5)
        let db = try Database(path: folder.path("nested.sqlite"), options: options)
        defer { try? db.close() }
        NestedReadRow.testDatabase = db
        defer { NestedReadRow.testDatabase = nil }
        try NestedReadRow.createTable()
        for n in 0..<3 {
            let row = NestedReadRow()
            row.n = n
            try row.save()
        }
        // Both threads hold a reader (their walk) before either reads inside it.
        let holding = DispatchGroup()
        holding.enter()
        holding.enter()
        let errors = Locked<[String]>([])
        let counts = Locked<[Int]>([])
        let done = DispatchGroup()
        for _ in 0..<2 {
            done.enter()
            Thread {
                defer { done.leave() }
                var first = true
                do {
                    try NestedReadRow.all.each { _ in
                        if first {
                            first = false
                            holding.leave()
                            _ = holding.wait(timeout: .now() + 10)
                        }
                        let count = try NestedReadRow.countAll()   // a read inside the walk
                        counts.withLock { $0.append(count) }
                    }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }.start()
        }
        #expect(done.wait(timeout: .now() + 30) == .success, "the walks did not finish")
        #expect(errors.withLock { $0 }.isEmpty)
        #expect(counts.withLock { $0 } == Array(repeating: 3, count: 6))
    }
}

/// The model of threadsReadingInsideTheirOwnWalksDoNotWaitForEachOther (its own database).
final class NestedReadRow: ActiveObject {
    nonisolated(unsafe) static var testDatabase: Database?
    override class var database: Database? { testDatabase }
    @Column var n: Int = 0
}
