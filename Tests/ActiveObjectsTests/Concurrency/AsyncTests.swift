import Foundation
import Testing
@testable import ActiveObjects

final class AsyncNote: ModelTestRecord {
    @Column var title = ""
    @Column var rank = 0
    @Column var done = false

    var hooksRan: [String] = []
    override func willSave() throws { hooksRan.append("willSave") }
    override func didSave() { hooksRan.append("didSave") }
    override func willDelete() throws { hooksRan.append("willDelete") }
    override func didDelete() { hooksRan.append("didDelete") }
}

/// A screen as an app writes it: main-actor state, async calls into the library.
@MainActor final class AsyncNotesScreen {
    var notes: [AsyncNote] = []
    func load() async throws {
        notes = try await AsyncNote.where(\.$done == false).order(by: \.$rank).all()
    }
    func add(_ title: String, rank: Int) async throws -> AsyncNote {
        let note = AsyncNote()
        note.title = title
        note.rank = rank
        try await note.save()
        notes.append(note)
        return note
    }
}

/// Runs `body` with a fresh WAL file database for the test models (task-local, so the async
/// calls below find it on the library's threads through the job's database).
nonisolated(nonsending) func withAsyncModelDB<T>(_ body: nonisolated(nonsending) (Database) async throws -> T) async throws -> T {
    let folder = try TemporaryDirectory()
    let db = try Database(path: folder.path("async.sqlite"))
    defer { try? db.close() }
    return try await ModelTestDB.$current.withValue(db) {
        try AsyncNote.createTable()
        return try await body(db)
    }
}

/// Waits for `semaphore` without blocking a thread of the cooperative pool (it polls), and
/// fails the test when it is not signalled within `seconds`. Be generous: the signalling task
/// may itself wait for a pool thread while the suites running beside it hold both.
func waitForSignal(_ semaphore: DispatchSemaphore, seconds: Double) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while semaphore.wait(timeout: .now()) != .success {
        guard Date() < deadline else { throw TestFailure(message: "not signalled within \(seconds) s") }
        try await Task.sleep(nanoseconds: 1_000_000)
    }
}

/// Fails the test (instead of hanging CI) when `body` takes longer than `seconds`.
func withTimeout<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw TestFailure(message: "timed out after \(seconds) s")
        }
        group.cancelAll()
        return value
    }
}

@Suite struct AsyncTests {
    @Test func asyncFindersAndTerminalsGiveWhatTheSynchronousFormsGive() async throws {
        try await withAsyncModelDB { db in
            for rank in 0..<10 {
                let note = AsyncNote()
                note.title = "n\(rank)"
                note.rank = rank
                note.done = rank.isMultiple(of: 3)
                try await note.save()
                #expect(note.id == Int64(rank + 1))
            }
            let query = AsyncNote.where(\.$done == false).order(by: \.$rank, .descending)
            #expect(try await query.all().map(\.rank) == (try query.all()).map(\.rank))
            #expect(try await query.first()?.rank == 8)
            #expect(try await query.count() == 6)
            #expect(try await query.exists())
            #expect(try await query.page(2, size: 4).map(\.rank) == [2, 1])
            #expect(try await query.pluck(\.$title) == ["n8", "n7", "n5", "n4", "n2", "n1"])
            #expect(try await query.sum(\.$rank) == 27)
            #expect(try await query.min(\.$rank) == 1)
            #expect(try await query.max(\.$rank) == 8)
            #expect(try await query.average(\.$rank) == 4.5)
            #expect(try await AsyncNote.find(id: 3)?.title == "n2")
            #expect(try await AsyncNote.find(ids: [3, 1, 99, 3]).map(\.rank) == [2, 0])
            #expect(try await AsyncNote.findAll().count == 10)
            #expect(try await AsyncNote.find(where: ["done": true]).map(\.rank) == [0, 3, 6, 9])
            #expect(try await AsyncNote.findFirst(where: ["done": false])?.rank == 1)
            #expect(try await AsyncNote.countAll() == 10)
            #expect(try await AsyncNote.count(where: ["done": true]) == 4)
            #expect(try await AsyncNote.fetch(sql: "SELECT * FROM async_note WHERE rank > ?", arguments: [7]).count == 2)
            #expect(try await db.rows("SELECT title FROM async_note WHERE rank = ?", arguments: [4]).first?["title"] == "n4")
            let n: Int? = try await db.scalar("SELECT count(*) FROM async_note")
            #expect(n == 10)
            #expect(try await AsyncNote.where(\.$rank >= 8).delete() == 2)
            #expect(try await AsyncNote.delete(where: ["rank": 7]) == 1)
            try await db.execute("UPDATE async_note SET title = ? WHERE rank = ?", arguments: ["four", 4])
            #expect(try await AsyncNote.findFirst(where: ["rank": 4])?.title == "four")
            #expect(try await AsyncNote.deleteAll() == 7)
        }
    }

    @MainActor @Test func asyncWritesRunTheHooksAndUpdateTheObjectOnTheCallersActor() async throws {
        try await withAsyncModelDB { db in
            let screen = AsyncNotesScreen()
            let note = try await screen.add("first", rank: 1)
            _ = try await screen.add("second", rank: 2)
            let (id, hooks, changed) = (note.id, note.hooksRan, note.hasChanges)
            #expect(id == 1 && hooks == ["willSave", "didSave"] && !changed)
            try await screen.load()
            #expect(screen.notes.map(\.title) == ["first", "second"])

            let loaded = try #require(try await AsyncNote.find(id: 2))
            loaded.title = "changed"
            try await loaded.update()
            #expect(!loaded.hasChanges)
            try await loaded.update()   // nothing changed: no SQL, still didSave
            #expect(loaded.hooksRan == ["willSave", "didSave", "willSave", "didSave"])
            try await db.execute("UPDATE async_note SET rank = 20 WHERE id = 2")
            try await loaded.reload()
            #expect(loaded.rank == 20 && !loaded.hasChanges)
            #expect(try await loaded.delete())
            #expect(loaded.hooksRan.suffix(2) == ["willDelete", "didDelete"])
            #expect(try await AsyncNote.countAll() == 1)
            // Deleted, then saved again: the whole row comes back with its id.
            try await loaded.save()
            #expect(try await AsyncNote.find(id: 2)?.title == "changed")
            let copy = AsyncNote()
            copy.id = 2
            copy.title = "upserted"
            try await copy.upsert()
            #expect(try await AsyncNote.find(id: 2)?.title == "upserted")
            let inserted = AsyncNote()
            try await inserted.insert()
            #expect(inserted.id == 3)
        }
    }

    @Test func aFailedAsyncWriteLeavesTheObjectAsItWas() async throws {
        try await withAsyncModelDB { db in
            try await db.execute("CREATE UNIQUE INDEX async_note_title ON async_note(title)")
            let first = AsyncNote()
            first.title = "same"
            try await first.save()
            let second = AsyncNote()
            second.title = "same"
            await #expect(throws: DatabaseError.self) { try await second.save() }
            #expect(second.id == nil && second.hasChanges)
            second.title = "other"
            try await second.save()
            #expect(second.id == 2)
        }
    }

    @Test func readAndTransactionRunTheirBodiesOnTheLibrarysThreads() async throws {
        try await withAsyncModelDB { db in
            let id = ObjectIdentifier(db)
            let (writerIsJob, writerReadScope) = try await db.transaction { () -> (Bool, Bool) in
                let note = AsyncNote()
                note.title = "in transaction"
                try note.save()
                let context = ThreadContext.current
                return (context.isRunningAsyncJob, context.readScope(for: id) != nil)
            }
            let (readerIsJob, readerForbidsWrites, count) = try await db.read {
                let context = ThreadContext.current
                return (context.isRunningAsyncJob, context.readScope(for: id)?.forbidsWrites == true, try AsyncNote.countAll())
            }
            // Both bodies ran as the library's jobs (on its own threads, not the cooperative
            // pool), the transaction on the writer, the read in a write-refusing read scope.
            #expect(writerIsJob && !writerReadScope)
            #expect(readerIsJob && readerForbidsWrites)
            #expect(!ThreadContext.current.isRunningAsyncJob)
            #expect(count == 1)
            // A throwing body rolls back and the error reaches the caller.
            await #expect(throws: TestFailure.self) {
                try await db.transaction {
                    try db.execute("DELETE FROM async_note")
                    throw TestFailure()
                }
            }
            #expect(try await AsyncNote.countAll() == 1)
            // A raw BEGIN from an async call cannot keep its transaction: refused.
            do {
                try await db.execute("BEGIN")
                Issue.record("a raw BEGIN from an async call was accepted")
            } catch let error as ActiveObjectError {
                #expect(error.isMisuse)
            }
            #expect(!db.isInTransaction)
        }
    }

    @Test func asyncReadsDoNotWaitForALongAsyncTransaction() async throws {
        try await withAsyncModelDB { db in
            try await AsyncNote().save()
            let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            let writing = Task {
                try await db.transaction { () -> Bool in
                    try db.execute("INSERT INTO async_note(title) VALUES ('slow')")
                    started.signal()
                    // Stays open until the reads below are done (or 60 s, a failure: reads
                    // that waited for it would see two rows anyway).
                    return release.wait(timeout: .now() + 60) == .success
                }
            }
            try await waitForSignal(started, seconds: 60)
            for _ in 0..<20 { #expect(try await AsyncNote.countAll() == 1) }
            release.signal()
            #expect(try await writing.value, "the reads waited for the transaction")
            #expect(try await AsyncNote.countAll() == 2)
        }
    }

    @Test func aCallCancelledBeforeItRunsThrowsAndWritesNothing() async throws {
        try await withAsyncModelDB { db in
            let started = DispatchSemaphore(value: 0)
            let blocker = Task {
                try await db.transaction {
                    started.signal()
                    Thread.sleep(forTimeInterval: 0.5)
                }
            }
            try await waitForSignal(started, seconds: 60)
            // Queued behind the transaction on the writer thread, then cancelled.
            let queued = Task { try await db.execute("INSERT INTO async_note(title) VALUES ('cancelled')") }
            queued.cancel()
            await #expect(throws: CancellationError.self) { try await queued.value }
            try await blocker.value
            #expect(try await AsyncNote.countAll() == 0)
        }
    }

    @Test func manyConcurrentAsyncCallsComplete() async throws {
        try await withAsyncModelDB { db in
            try await withTimeout(60) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<200 {
                        group.addTask {
                            try await ModelTestDB.$current.withValue(db) {
                                if i.isMultiple(of: 4) {
                                    let note = AsyncNote()
                                    note.rank = i
                                    try await note.save()
                                } else {
                                    _ = try await AsyncNote.where(\.$rank < i).count()
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(try await AsyncNote.countAll() == 50)
        }
    }

    @Test func closingTheDatabaseEndsItsThreads() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("threads.sqlite"))
        try await db.execute("CREATE TABLE t(x)")
        _ = try await db.rows("SELECT * FROM t")
        #expect(db.writerLane.runningThreads <= 1, "one writer thread at most")
        try db.close()
        try await withTimeout(10) {
            while db.writerLane.runningThreads + db.readerLane.runningThreads > 0 {
                try await Task.sleep(nanoseconds: 10_000_000)
            }
        }
        do {
            try await db.execute("INSERT INTO t VALUES (1)")
            Issue.record("a closed database accepted an async call")
        } catch let error as ActiveObjectError {
            #expect(error.isDatabaseClosed)
        }
    }
}
