import Foundation
import Testing
@testable import ActiveObjects

/// Live queries at the edges: schema changes after statements were cached, busy errors while
/// re-fetching, raw savepoints rolled back, and other processes' commits during a stream of
/// this process's own. Raw SQL on databases of their own (no shared model database), so the
/// suite runs beside the others; every wait has a timeout (``LiveProbe``).
@Suite struct LiveQueryEdgeTests {
    /// `SELECT count(*) FROM <table>` as a live sequence of counts.
    static func counting(_ table: String, in db: Database) -> LiveProbe<Int> {
        LiveProbe(db.values { try db.scalar("SELECT count(*) FROM \(table)") as Int? }) { $0 ?? -1 }
    }

    /// Runs `body` on a thread of its own; returns once `body` has signalled that it holds
    /// what it must hold (it calls its argument), and a flag that turns true when it ended.
    static func hold(_ body: @escaping @Sendable (@escaping @Sendable () -> Void) throws -> Void) async -> Locked<Bool> {
        let holding = Locked(false), done = Locked(false)
        Thread.detachNewThread {
            try? body { holding.withLock { $0 = true } }
            holding.withLock { $0 = true }
            done.withLock { $0 = true }
        }
        let deadline = Date().addingTimeInterval(10)
        while !holding.current && Date() < deadline { try? await Task.sleep(nanoseconds: 1_000_000) }
        return done
    }

    // MARK: Schema changes

    @Test func aTriggerAddedAfterAStatementWasCachedIsFollowed() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("trigger.sqlite"))
        defer { try? db.close() }
        try await db.execute("CREATE TABLE a (x INTEGER)")
        try await db.execute("CREATE TABLE b (x INTEGER)")
        // Compiled (and cached) while it writes only `a`.
        try await db.execute("INSERT INTO a VALUES (?)", [1])
        let probe = Self.counting("b", in: db)
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        try await db.execute("CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO b VALUES (new.x); END")
        // The schema changed, the observed result did not: nothing.
        #expect(await probe.staysAt(1))
        // The same cached INSERT now writes `b` through the trigger.
        try await db.execute("INSERT INTO a VALUES (?)", [2])
        #expect(await probe.waitFor(count: 2, timeout: 10))
        #expect(probe.elements == [0, 1])
        // Dropping the trigger: the INSERT writes only `a` again, observers of `b` hear nothing.
        try await db.execute("DROP TRIGGER t")
        try await db.execute("INSERT INTO a VALUES (?)", [3])
        #expect(await probe.staysAt(2))
        #expect(!probe.isFinished)
    }

    @Test func aTriggerAddedByAnotherConnectionIsFollowedToo() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("trigger-other.sqlite")
        let db = try Database(path: path)
        defer { try? db.close() }
        try await db.execute("CREATE TABLE a (x INTEGER)")
        try await db.execute("CREATE TABLE b (x INTEGER)")
        try await db.execute("INSERT INTO a VALUES (?)", [1])
        let probe = Self.counting("b", in: db)
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        // Another connection (another process would do the same) adds the trigger.
        let other = try Database(path: path)
        try await other.execute("CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO b VALUES (new.x); END")
        try other.close()
        #expect(await probe.staysAt(1))
        // This database's cached INSERT is re-compiled by SQLite, and learns that it writes `b`.
        try await db.execute("INSERT INTO a VALUES (?)", [2])
        #expect(await probe.waitFor(count: 2, timeout: 10))
        #expect(probe.elements == [0, 1])
    }

    @Test func aViewRedefinedOverAnotherTableIsFollowed() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("view.sqlite"))
        defer { try? db.close() }
        try await db.execute("CREATE TABLE x (v INTEGER)")
        try await db.execute("CREATE TABLE b (v INTEGER)")
        try await db.execute("CREATE VIEW v AS SELECT v FROM x")
        let probe = Self.counting("v", in: db)
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        try await db.execute("INSERT INTO x VALUES (1)")
        #expect(await probe.waitFor(count: 2, timeout: 10))
        // Redefined in one transaction (between a DROP and a CREATE committed apart, a fetch
        // of the dropped view would fail, and end the sequence with that error).
        try await db.transaction {
            try db.execute("DROP VIEW v")
            try db.execute("CREATE VIEW v AS SELECT v FROM b")
        }
        // The view now counts `b`, which is empty: an element with the changed result.
        #expect(await probe.waitFor(count: 3, timeout: 10))
        try await db.execute("INSERT INTO b VALUES (1)")
        try await db.execute("INSERT INTO b VALUES (2)")
        let deadline = Date().addingTimeInterval(10)
        while probe.elements.last != 2 && Date() < deadline { try await Task.sleep(nanoseconds: 2_000_000) }
        #expect(probe.elements.last == 2)
        // `x` is no longer read.
        let count = probe.elements.count
        try await db.execute("INSERT INTO x VALUES (2)")
        #expect(await probe.staysAt(count))
        #expect(Array(probe.elements.prefix(3)) == [0, 1, 0])
    }

    // MARK: Busy while re-fetching

    /// Options for the busy tests: one reader, a busy timeout of one second.
    static var busyOptions: Database.Options {
        var options = Database.Options()
        options.maximumReaderCount = 1
        options.busyTimeout = .seconds(1)
        return options
    }

    /// SQLite also re-compiles a statement whose bound LIKE pattern may change its plan (and
    /// table-valued pragmas compile SQL as they run): no schema change, so the statement keeps
    /// its tables and the database keeps the table layouts it learned (re-learning each time
    /// made such queries 20 % slower and a natural-key model's lookups 3.5× slower).
    @Test func aRecompileWithoutASchemaChangeRelearnsNothing() throws {
        let folder = try TemporaryDirectory()
        var options = Database.Options()
        options.maximumReaderCount = 0
        let db = try Database(path: folder.path("like.sqlite"), options: options)
        defer { try? db.close() }
        try db.execute("CREATE TABLE coded (code TEXT PRIMARY KEY, name TEXT NOT NULL) WITHOUT ROWID")
        try db.execute("INSERT INTO coded VALUES ('a1', 'Ann'), ('b2', 'Bob')")
        #expect(!db.tableHasRowID("coded"))
        let sql = "SELECT count(*) FROM coded WHERE name LIKE ?"
        let statement = try db.writer.lock.withLock { try db.writer.cachedStatement(sql) }
        let info = statement.info
        for pattern in ["A%", "B%", "%n", "C%"] {
            _ = try db.scalar(sql, [pattern]) as Int?
            _ = try db.rows("SELECT name FROM pragma_table_info('coded')")
        }
        #expect(statement.info === info, "the statement learned its tables again without a schema change")
        #expect(db.tableLayouts.withLock { $0["coded"] } == false, "the layout learned was forgotten")
        // A real schema change is still seen.
        try db.execute("CREATE TABLE other (x)")
        _ = try db.scalar(sql, ["A%"]) as Int?
        #expect(db.tableLayouts.withLock { $0["coded"] } == nil)
    }

    @Test func aReaderHeldLongerThanTheBusyTimeoutDelaysTheFetchWithoutEndingIt() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("busy-reader.sqlite"), options: Self.busyOptions)
        defer { try? db.close() }
        try await db.execute("CREATE TABLE t (x INTEGER)")
        let probe = Self.counting("t", in: db)
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        // Another thread keeps the only reader for 2.5 s (a long read, a cursor left open).
        // `released` is set inside the block, before the reader is given back: the fetch can
        // only get the reader after it.
        let released = Locked(false)
        _ = await Self.hold { holding in
            try db.read {
                holding()
                Thread.sleep(forTimeInterval: 2.5)
                released.withLock { $0 = true }
            }
        }
        try await db.execute("INSERT INTO t VALUES (1)")
        // The fetch waits a busy timeout for the reader, fails with `busy`, and tries again.
        #expect(await probe.waitFor(count: 2, timeout: 30))
        #expect(released.current, "the element came before the reader was free")
        #expect(probe.error == nil)
        #expect(!probe.isFinished)
        #expect(probe.elements.last == 1)
        // Still observing.
        try await db.execute("INSERT INTO t VALUES (2)")
        #expect(await probe.waitFor(count: 3, timeout: 10))
        #expect(probe.elements.last == (try await db.scalar("SELECT count(*) FROM t") as Int?))
    }

    @Test func aWriterHeldLongerThanTheBusyTimeoutDelaysTheFetchInMemory() async throws {
        let db = try Database.inMemory(options: Self.busyOptions)
        defer { try? db.close() }
        try await db.execute("CREATE TABLE t (x INTEGER)")
        let probe = Self.counting("t", in: db)
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        // In memory, fetches use the writer. A thread commits, then at once (without giving
        // the writer back in between) runs a 2.5 s transaction that commits a second row.
        // `released` is set before the writer is given back (see the test above).
        let released = Locked(false)
        _ = await Self.hold { holding in
            try db.withWriter { _ in
                try db.execute("INSERT INTO t VALUES (1)")
                holding()
                try db.transaction {
                    Thread.sleep(forTimeInterval: 2.5)
                    try db.execute("INSERT INTO t VALUES (2)")
                }
                released.withLock { $0 = true }
            }
        }
        // Each fetch waits a busy timeout for the writer, fails with `busy`, and tries again
        // until the transaction is over: the last element is the fresh result.
        let deadline = Date().addingTimeInterval(30)
        while probe.elements.last != 2 && !probe.isFinished && Date() < deadline {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(released.current)
        #expect(probe.error == nil, "\(String(describing: probe.error))")
        #expect(!probe.isFinished)
        #expect(probe.elements.last == 2)
        #expect(probe.elements.count <= 3)
    }

    @Test func anObservationWaitingToRetryEndsPromptlyWhenCancelledOrClosed() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("busy-end.sqlite"), options: Self.busyOptions)
        defer { try? db.close() }
        try await db.execute("CREATE TABLE t (x INTEGER)")
        let cancelled = Self.counting("t", in: db)
        let closed = Self.counting("t", in: db)
        #expect(await cancelled.waitFor(count: 1))
        #expect(await closed.waitFor(count: 1))
        // The reader stays held for 10 s: "promptly" is "long before the lock is gone". (The
        // bounds are loose because the ends are seen from tasks of the cooperative pool, which
        // the suites running beside this one can keep busy for a second or more.)
        let done = await Self.hold { holding in
            try db.read {
                holding()
                Thread.sleep(forTimeInterval: 10)
            }
        }
        try await db.execute("INSERT INTO t VALUES (1)")
        try await Task.sleep(nanoseconds: 1_500_000_000)   // past a first busy timeout: retrying
        #expect(!cancelled.isFinished && !closed.isFinished)
        var start = Date()
        cancelled.cancel()
        #expect(await cancelled.waitForEnd(timeout: 10))
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(!done.current, "the cancelled observation ended only when the reader was free")
        #expect(cancelled.elements == [0])
        // The observation ends at once when the database closes, whatever the held reader.
        start = Date()
        Thread.detachNewThread { try? db.close() }
        #expect(await closed.waitForEnd(timeout: 10))
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(!done.current, "the observation ended only when the reader was free")
        #expect((closed.error as? ActiveObjectError)?.isDatabaseClosed == true)
        let deadline = Date().addingTimeInterval(20)
        while !done.current && Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(db.observations.count == 0)
    }

    // MARK: Raw savepoints

    /// Runs raw statements one after the other on the calling thread (a raw savepoint keeps
    /// the writer on its thread: no suspension in between).
    static func run(_ db: Database, _ statements: [String]) throws {
        for sql in statements { try db.execute(sql) }
    }

    /// ``run(_:_:)`` inside `db.transaction { }`, on the calling thread.
    static func runInTransaction(_ db: Database, _ statements: [String]) throws {
        try db.transaction { try run(db, statements) }
    }

    @Test func aRolledBackRawSavepointEmitsNothing() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("savepoint.sqlite"))
        defer { try? db.close() }
        try await db.execute("CREATE TABLE t (x INTEGER)")
        try await db.execute("CREATE TABLE u (x INTEGER)")
        let probe = Self.counting("t", in: db)
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        // Outside a transaction (the savepoint is the transaction).
        try Self.run(db, ["SAVEPOINT s", "INSERT INTO t VALUES (1)", "ROLLBACK TO s", "RELEASE s"])
        // Inside db.transaction.
        try Self.runInTransaction(db, ["SAVEPOINT s", "INSERT INTO t VALUES (1)", "ROLLBACK TO s", "RELEASE s"])
        // Nested: rolling back to the inner one, releasing the outer one.
        try Self.run(db, ["SAVEPOINT outer_s", "SAVEPOINT inner_s", "INSERT INTO t VALUES (1)",
                          "ROLLBACK TO inner_s", "RELEASE outer_s"])
        // The rolled-back part wrote `t`, the kept part only `u`.
        try Self.run(db, ["SAVEPOINT s", "INSERT INTO u VALUES (1)", "SAVEPOINT s2", "INSERT INTO t VALUES (1)",
                          "ROLLBACK TO s2", "RELEASE s"])
        // Inside a raw BEGIN: two savepoints of the same name, the inner one released, then
        // rolled back to the outer one.
        try Self.run(db, ["BEGIN", "SAVEPOINT s", "INSERT INTO t VALUES (1)", "SAVEPOINT s", "RELEASE s",
                          "ROLLBACK TO s", "COMMIT"])
        #expect(await probe.staysAt(1, for: 0.5))
        #expect(try await db.scalar("SELECT count(*) FROM t") as Int? == 0)
        // A released savepoint keeps its changes: one element.
        try Self.run(db, ["SAVEPOINT s", "INSERT INTO t VALUES (1)", "RELEASE s"])
        #expect(await probe.waitFor(count: 2, timeout: 10))
        // Rolled back, then written again after ROLLBACK TO: kept.
        try Self.runInTransaction(db, ["SAVEPOINT s", "INSERT INTO u VALUES (2)", "ROLLBACK TO s",
                                       "INSERT INTO t VALUES (2)", "RELEASE s"])
        #expect(await probe.waitFor(count: 3, timeout: 10))
        #expect(probe.elements == [0, 1, 2])
    }

    @Test func aNestedBodyCannotReleaseARawSavepointOfAnEnclosingLevel() throws {
        let db = try Database.inMemory()
        defer { try? db.close() }
        try db.execute("CREATE TABLE t (x INTEGER)")
        try db.transaction {
            try db.execute("SAVEPOINT mine")
            try db.execute("INSERT INTO t VALUES (1)")
            do {
                try db.transaction {
                    // Would release the nested transaction's own savepoint with it.
                    try db.execute("RELEASE mine")
                }
                Issue.record("a RELEASE of an enclosing level's savepoint ran")
            } catch ActiveObjectError.misuse(let message) {
                #expect(message.contains("RELEASE mine"), "\(message)")
            }
            // The level that opened it may.
            try db.execute("RELEASE mine")
        }
        #expect(try db.scalar("SELECT count(*) FROM t") as Int? == 1)
    }

    // MARK: The monitor's first look

    /// The first look at `data_version` is the baseline of the next ones; taken after another
    /// connection's commit that the first fetch did not see, it hid that commit for good (the
    /// observation waited for the next one). Here the first look is made late on purpose:
    /// this database's writer is held while the observation starts and the other connection
    /// commits, so the monitor cannot look until the holder gives the writer back.
    @Test func aCommitMadeBeforeTheMonitorsFirstLookIsNoticed() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("first-look.sqlite")
        let db = try Database(path: path)
        defer { try? db.close() }
        try await db.execute("CREATE TABLE t (x INTEGER)")
        let other = try Database(path: path)
        defer { try? other.close() }
        let release = DispatchSemaphore(value: 0)
        let held = await Self.hold { holding in
            try db.withWriter { _ in
                holding()
                _ = release.wait(timeout: .now() + 20)
            }
        }
        defer { release.signal() }
        // Reads run on readers: the observation starts while the writer is held.
        let probe = Self.counting("t", in: db)
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        #expect(probe.elements == [0])
        try await other.execute("INSERT INTO t VALUES (1)")
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(!held.current)
        release.signal()
        #expect(await probe.waitFor(count: 2, timeout: 10), "the other connection's commit was never noticed")
        #expect(probe.elements.last == 1)
    }

    /// On one connection (`maximumReaderCount = 0`), a cursor left open keeps a read
    /// transaction on the writer without holding it: a look at `data_version` then reads the
    /// cursor's snapshot. It must not become the baseline (the commit would be hidden for
    /// good): the look is made again once the cursor is closed.
    @Test func aCommitMadeWhileACursorHoldsTheOnlyConnectionIsNoticedWhenItCloses() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("cursor.sqlite")
        var options = Database.Options()
        options.maximumReaderCount = 0
        let db = try Database(path: path, options: options)
        defer { try? db.close() }
        try await db.execute("CREATE TABLE edge_cursor_row (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '')")
        try await db.execute("INSERT INTO edge_cursor_row (name) VALUES ('a'), ('b')")
        let other = try Database(path: path)
        defer { try? other.close() }
        let probe = Self.counting("edge_cursor_row", in: db)
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        let release = DispatchSemaphore(value: 0)
        let reading = Locked(false)
        let closed = await Self.hold { holding in
            try EdgeCursorDB.$current.withValue(db) {
                let cursor = try EdgeCursorRow.all.cursor()
                if try cursor.next() != nil { reading.withLock { $0 = true } }
                holding()
                _ = release.wait(timeout: .now() + 20)
                cursor.close()
            }
        }
        defer { release.signal() }
        #expect(reading.current, "the cursor did not open")
        try await other.execute("INSERT INTO edge_cursor_row (name) VALUES ('c')")
        try await Task.sleep(nanoseconds: 600_000_000)   // the monitor looks (and must look again)
        release.signal()
        let deadline = Date().addingTimeInterval(10)
        while !closed.current && Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(await probe.waitFor(count: 2, timeout: 10), "the other connection's commit was never noticed")
        #expect(probe.elements.last == 3)
    }

    @Test func theFirstLookAtTheDataVersionCountsAsAChange() {
        let watch = DataVersionWatch(onChange: {})
        #expect(watch.record(7))
        #expect(!watch.record(7))
        #expect(watch.record(8))
        #expect(!watch.record(8))
    }

    // MARK: Other processes during a stream of own commits

    struct Arrival: Sendable {
        let count: Int
        let at: Date
    }

    /// Times are taken where the library does its work, off Swift's cooperative pool: the
    /// commit on the thread that made it, the sighting in the live query's fetch (on a reader
    /// thread), every fetch recorded. The consumer's task cannot time them: the tests running
    /// beside this one share two cores and the pool, so its resumptions can lag by a second,
    /// and a slow consumer is given only the newest result (the fetches it skipped are
    /// coalesced, as they should be).
    @Test func anotherConnectionsCommitsAreNoticedWhileThisDatabaseCommitsBackToBack() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("stream.sqlite")
        let db = try Database(path: path)
        defer { try? db.close() }
        try await db.execute("CREATE TABLE a (x INTEGER)")
        try await db.execute("CREATE TABLE b (x INTEGER)")
        let other = try Database(path: path)
        defer { try? other.close() }
        let sightings = Locked<[Arrival]>([])
        let probe = LiveProbe(db.values { () throws -> Int in
            let count = try db.scalar("SELECT count(*) FROM b") as Int? ?? -1
            let now = Date()
            sightings.withLock { $0.append(Arrival(count: count, at: now)) }
            return count
        }) { $0 }
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))

        // This database commits to `a` in a tight loop on a thread of its own, taking its
        // writer again as soon as it gave it back. (Each turn keeps the writer a moment after
        // its commit, outside any transaction: the file's write lock is free then, so that
        // SQLite's busy handler lets the other connection's commits in.)
        let stop = Locked(false), ownCommits = Locked(0)
        defer { stop.withLock { $0 = true } }
        let loopEnded = await Self.hold { started in
            started()
            while !stop.current {
                try db.withWriter { _ in
                    try db.execute("INSERT INTO a VALUES (1)")
                    usleep(500)
                }
                ownCommits.withLock { $0 += 1 }
            }
        }
        // …while another connection commits ten rows to `b`, with pauses, on a thread of its own.
        // Each commit notes how many own commits were made so far: the stream must still be
        // running between them (else the test would pass without any stream).
        let start = Date()
        let committed = Locked<[(at: Date, ownCommits: Int)]>([])
        let othersEnded = await Self.hold { started in
            started()
            for value in 1...10 {
                usleep(130_000)
                try other.execute("INSERT INTO b VALUES (?)", [value])
                let now = Date()
                committed.withLock { $0.append((now, ownCommits.current)) }
            }
        }
        var deadline = Date().addingTimeInterval(20)
        while !othersEnded.current && Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
        let elapsed = Date().timeIntervalSince(start)
        let commits = committed.current
        #expect(commits.count == 10, "the other connection's commits failed")
        let ownCounts = [0] + commits.map(\.ownCommits)
        #expect(zip(ownCounts, ownCounts.dropFirst()).allSatisfy { $0 < $1 },
                "this database did not commit between the other connection's commits: \(ownCounts)")
        #expect(!loopEnded.current, "the stream of own commits ended early")
        let waitEnd = Date().addingTimeInterval(10)
        while probe.elements.last != 10 && Date() < waitEnd { try await Task.sleep(nanoseconds: 5_000_000) }
        stop.withLock { $0 = true }
        deadline = Date().addingTimeInterval(10)
        while !loopEnded.current && Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
        let arrivals = sightings.current
        var delays: [Double] = []
        for (index, time) in commits.map(\.at).enumerated() {
            guard let seen = arrivals.first(where: { $0.count >= index + 1 }) else {
                Issue.record("the commit of row \(index + 1) of `b` was never seen")
                continue
            }
            let delay = seen.at.timeIntervalSince(time)
            delays.append(delay)
            #expect(delay <= 0.5, "row \(index + 1) of `b` fetched \(Int(delay * 1000)) ms after its commit")
        }
        print("RELIABILITY live queries: \(commits.last?.ownCommits ?? 0) own commits in \(Int(elapsed * 1000)) ms; another connection's 10 commits fetched after (ms) \(delays.map { Int($0 * 1000) })")
        #expect(probe.elements.last == 10, "the consumer's last element is not the last commit's result")
        #expect(ownCommits.current > 10, "the loop did not commit back to back")
    }
}

enum EdgeCursorDB {
    @TaskLocal static var current: Database?
}

final class EdgeCursorRow: ActiveObject {
    override class var database: Database? { EdgeCursorDB.current }
    @Column var name = ""
}
