import Foundation
import Testing
@testable import ActiveObjects

/// Cancelling the task of an async transaction or write leaves it wholly committed or wholly
/// rolled back, and the database usable (API §15).
@Suite struct AsyncCancellationTests {
    @Test func aTransactionCancelledWhileItRunsCommitsWhollyOrNotAtAll() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("cancel.sqlite"))
        defer { try? db.close() }
        try synchronously { try db.execute("CREATE TABLE t (x INTEGER)") }
        for round in 0..<10 {
            let started = DispatchSemaphore(value: 0)
            let task = Task {
                try await db.transaction {
                    try db.execute("INSERT INTO t VALUES (?)", [round])
                    started.signal()
                    usleep(20_000)
                    try db.execute("INSERT INTO t VALUES (?)", [round])
                }
            }
            try await waitForSignal(started, seconds: 30)
            task.cancel()
            _ = await task.result
            let rows: Int? = try await db.scalar("SELECT count(*) FROM t WHERE x = ?", [round])
            #expect(rows == 0 || rows == 2, "round \(round): \(rows ?? -1) of the transaction's 2 rows")
            #expect(!db.isInTransaction)
        }
        // Usable afterwards, sync and async.
        try synchronously { try db.execute("INSERT INTO t VALUES (99)") }
        try await db.transaction { try db.execute("INSERT INTO t VALUES (100)") }
        #expect(try await db.scalar("SELECT count(*) FROM t WHERE x >= 99") as Int? == 2)
    }

    @Test func aCallCancelledBeforeItStartsRunsNothing() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("cancel-first.sqlite"))
        defer { try? db.close() }
        try synchronously { try db.execute("CREATE TABLE t (x INTEGER)") }
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await db.transaction { try db.execute("INSERT INTO t VALUES (1)") }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        try await ModelTestDB.$current.withValue(db) {
            try synchronously { try CancelledNote.createTable() }
            let save = Task { () -> String in
                withUnsafeCurrentTask { $0?.cancel() }
                let note = CancelledNote()
                note.title = "never"
                do {
                    try await note.save()
                    return "saved"
                } catch is CancellationError {
                    return note.id == nil && note.hasChanges ? "cancelled, still new" : "cancelled, but changed"
                } catch {
                    return "\(error)"
                }
            }
            #expect(await save.value == "cancelled, still new")
            #expect(try await CancelledNote.countAll() == 0)
        }
        #expect(try await db.scalar("SELECT count(*) FROM t") as Int? == 0)
    }
}

final class CancelledNote: ModelTestRecord {
    @Column var title = ""
}
