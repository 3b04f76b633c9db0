import Foundation
import Testing
@testable import ActiveObjects

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
            let (writerIsJob, writerScope) = try await db.transaction { () -> (Bool, Scope.Kind?) in
                let note = AsyncNote()
                note.title = "in transaction"
                try note.save()
                let thread = ThreadState.current
                return (thread.isRunningAsyncJob, thread.innermostScope(of: db)?.kind)
            }
            let (readerIsJob, readerScope, count) = try await db.read {
                let thread = ThreadState.current
                return (thread.isRunningAsyncJob, thread.innermostScope(of: db)?.kind, try AsyncNote.countAll())
            }
            // Both bodies ran as the library's jobs (on its own threads, not the cooperative
            // pool), the transaction on the writer, the read in a write-refusing read block.
            #expect(writerIsJob && writerScope == .writer)
            #expect(readerIsJob && readerScope == .readBlock)
            #expect(!ThreadState.current.isRunningAsyncJob)
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

    @Test func closingTheDatabaseRefusesAsyncCallsAndRunsNoMoreWork() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("threads.sqlite"))
        try await db.execute("CREATE TABLE t(x)")
        _ = try await db.rows("SELECT * FROM t")
        // At most as many reads run at once as there are reader connections.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<32 {
                group.addTask { _ = try await db.rows("SELECT count(*) FROM t") }
            }
            try await group.waitForAll()
        }
        #expect(db.background.runningReads == 0)
        try db.close()
        do {
            try await db.execute("INSERT INTO t VALUES (1)")
            Issue.record("a closed database accepted an async call")
        } catch let error as ActiveObjectError {
            #expect(error.isDatabaseClosed)
        }
    }

    // MARK: Async writes in flight

    /// Waits (bounded) until `object` has an async write planned and awaiting the writer.
    @MainActor static func waitUntilInFlight(_ object: ActiveObject) async throws {
        let deadline = Date(timeIntervalSinceNow: 20)
        while !object.asyncWriteInFlight && Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        try #require(object.asyncWriteInFlight, "the async write never started")
    }

    @MainActor @Test func anEditMadeWhileAnAsyncSaveAwaitsStaysAChange() async throws {
        try await withAsyncModelDB { db in
            let note = AsyncNote()
            note.title = "a"
            try await note.save()
            note.title = "b"
            let release = hold(db)
            let save = Task { @MainActor in try await note.save() }
            try await Self.waitUntilInFlight(note)
            note.title = "c"            // typed while "b" is being written
            release()
            try await save.value
            let stored: String? = try await db.scalar("SELECT title FROM async_note")
            #expect(stored == "b")
            #expect(note.hasChanges && note.changedColumns == ["title"])
            try await note.save()
            let after: String? = try await db.scalar("SELECT title FROM async_note")
            #expect(after == "c")
            #expect(!note.hasChanges)
        }
    }

    @MainActor @Test func anEditMadeWhileAsyncInsertAllAwaitsStaysAChange() async throws {
        try await withAsyncModelDB { db in
            let notes = (0..<3).map { index -> AsyncNote in
                let note = AsyncNote()
                note.title = "first \(index)"
                return note
            }
            let release = hold(db)
            let insert = Task { @MainActor in try await AsyncNote.insertAll(notes) }
            try await Self.waitUntilInFlight(notes[1])
            notes[1].title = "edited"
            release()
            try await insert.value
            #expect(notes.allSatisfy { $0.id != nil })
            #expect(!notes[0].hasChanges && notes[1].changedColumns == ["title"] && !notes[2].hasChanges)
            try await notes[1].save()
            let titles: [String] = try await db.rows("SELECT title FROM async_note ORDER BY id").map { try $0[0] }
            #expect(titles == ["first 0", "edited", "first 2"])
        }
    }

    @MainActor @Test func twoOverlappingAsyncSavesOfANewObjectInsertOneRow() async throws {
        try await withAsyncModelDB { db in
            let note = AsyncNote()
            note.title = "draft"
            let first = Task { @MainActor in try await note.save() }
            let second = Task { @MainActor in try await note.save() }   // a double tap on Save
            try await first.value
            try await second.value
            let rows: Int? = try await db.scalar("SELECT count(*) FROM async_note")
            #expect(rows == 1)
            #expect(note.id == 1 && !note.hasChanges)
            // A delete queued behind a save waits for it, then deletes the row it inserted.
            let other = AsyncNote()
            other.title = "short-lived"
            let saving = Task { @MainActor in try await other.save() }
            let deleting = Task { @MainActor in try await other.delete() }
            try await saving.value
            #expect(try await deleting.value)
            let left: Int? = try await db.scalar("SELECT count(*) FROM async_note")
            #expect(left == 1)
        }
    }

    @MainActor @Test func aSynchronousWriteDuringAnAsyncWriteIsRefused() async throws {
        try await withAsyncModelDB { db in
            let note = AsyncNote()
            note.title = "x"
            let release = hold(db)
            let save = Task { @MainActor in try await note.save() }
            try await Self.waitUntilInFlight(note)
            defer { release() }
            let error = expectActiveObjectError { try note.save() }
            #expect(error?.isMisuse == true)
            #expect(expectActiveObjectError { _ = try note.delete() }?.isMisuse == true)
            #expect(expectActiveObjectError { try AsyncNote.insertAll([note]) }?.isMisuse == true)
            release()
            try await save.value
            try Self.saveSynchronously(note)   // once it is done, writes work again
            let rows: Int? = try await db.scalar("SELECT count(*) FROM async_note")
            #expect(rows == 1)
        }
    }

    static func saveSynchronously(_ object: ActiveObject) throws { try object.save() }
}
