import Foundation
import Testing
@testable import ActiveObjects

/// The database a crash-test child process writes to (set inside the child only).
private let crashDatabase = Locked<Database?>(nil)

final class CrashBatchItem: ActiveObject {
    override class var database: Database? { crashDatabase.withLock { $0 } }
    @Column var batch: Int = 0
    @Column var seq: Int = 0
    @Column var payload: String = ""
}

/// A child process saves objects in transactions of 10 rows, in a loop, and is killed with
/// SIGKILL at a random moment. After each kill the parent checks that the file is intact,
/// that no transaction was half-applied, and that every transaction the child saw commit
/// is there.
@Suite("Crash safety")
struct CrashSafetyTests {
    static let killsPerMode = 12

    @Test(arguments: [Database.JournalMode.wal, .delete])
    func killedWriterLeavesOnlyWholeCommittedTransactions(mode: Database.JournalMode) async throws {
        let folder = try TemporaryDirectory()
        let databasePath = folder.path("crash.sqlite")
        let logPath = folder.path("committed.log")
        var options = Database.Options()
        options.journalMode = mode
        do {
            let setup = try Database(path: databasePath, options: options)
            crashDatabase.withLock { $0 = setup }   // only to create the table
            try CrashBatchItem.createTable(in: setup)
            try setup.close()
        }

        var generator = SeededGenerator(seed: mode == .wal ? 0xC0FFEE : 0xBADF00D)
        var previousRows = 0
        for round in 0..<Self.killsPerMode {
            let delay = UInt32.random(in: 2_000...40_000, using: &generator)   // microseconds
            await #expect(processExitsWith: .signal(SIGKILL)) {
                [databasePath = databasePath as String, logPath = logPath as String,
                 journal = mode.rawValue as String, delay = delay as UInt32] in
                var options = Database.Options()
                options.journalMode = journal == "WAL" ? .wal : .delete
                let database = try Database(path: databasePath, options: options)
                crashDatabase.withLock { $0 = database }
                let log = open(logPath, O_WRONLY | O_APPEND | O_CREAT, 0o644)
                let killer = Thread {
                    usleep(delay)
                    kill(getpid(), SIGKILL)
                }
                killer.start()
                var batch = (try database.scalar("SELECT max(batch) FROM crash_batch_item") as Int?).map { $0 + 1 } ?? 1
                while true {
                    try database.transaction {
                        for seq in 0..<10 {
                            let item = CrashBatchItem()
                            item.batch = batch
                            item.seq = seq
                            item.payload = String(repeating: "x", count: 50 + seq * 10)
                            try item.save()
                        }
                    }
                    // Recorded only after COMMIT returned: the transaction reported success.
                    let line = "\(batch)\n"
                    _ = line.withCString { write(log, $0, strlen($0)) }
                    fsync(log)
                    batch += 1
                }
            }

            let database = try Database(path: databasePath, options: options)
            let integrity: String? = try await database.scalar("PRAGMA integrity_check")
            #expect(integrity == "ok", "kill \(round) (\(mode)): integrity_check said \(integrity ?? "nothing")")
            let rows: Int = try await database.scalar("SELECT count(*) FROM crash_batch_item") ?? -1
            #expect(rows % 10 == 0, "kill \(round) (\(mode)): \(rows) rows is not whole transactions")
            #expect(rows >= previousRows, "kill \(round) (\(mode)): rows went from \(previousRows) to \(rows)")
            previousRows = rows
            let partial = try await database.rows(
                "SELECT batch, count(*) AS n FROM crash_batch_item GROUP BY batch HAVING n <> 10")
            #expect(partial.isEmpty, "kill \(round) (\(mode)): partial batches \(partial)")
            let committed = (try? String(contentsOfFile: logPath, encoding: .utf8))?
                .split(separator: "\n").compactMap { Int($0) } ?? []
            let present = Set(try await database.rows("SELECT DISTINCT batch FROM crash_batch_item").map { try $0["batch"] as Int })
            let missing = committed.filter { !present.contains($0) }
            #expect(missing.isEmpty, "kill \(round) (\(mode)): committed batches missing: \(missing)")
            try database.close()
        }
        #expect(previousRows > 0, "the child never committed anything in \(Self.killsPerMode) runs")
        print("RELIABILITY crash-safety \(mode.rawValue): \(Self.killsPerMode) SIGKILLs survived, \(previousRows) rows in whole transactions")
    }
}
