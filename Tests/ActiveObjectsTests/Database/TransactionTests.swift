import Foundation
import Testing
@testable import ActiveObjects

/// `Database.transaction`: commit, rollback, savepoints, and transactions SQLite ended itself.
@Suite struct TransactionTests {
    let recorder = TraceRecorder()
    let db: Database

    init() throws {
        db = try Database.inMemory(options: tracedOptions(recorder))
        try db.execute("CREATE TABLE t(x TEXT)")
        recorder.removeAll()
    }

    func values() throws -> [String] {
        try db.rows("SELECT x FROM t ORDER BY rowid").map { try $0["x"] }
    }

    @Test func commitsTheBodysWorkWithBeginImmediate() throws {
        let result = try db.transaction {
            #expect(db.isInTransaction)
            try db.execute("INSERT INTO t VALUES (?)", ["a"])
            try db.execute("INSERT INTO t VALUES (?)", ["b"])
            return 42
        }
        #expect(result == 42)
        #expect(!db.isInTransaction)
        #expect(recorder.statements == [
            "BEGIN IMMEDIATE", "INSERT INTO t VALUES (?)", "INSERT INTO t VALUES (?)", "COMMIT",
        ])
        #expect(try values() == ["a", "b"])
    }

    @Test func rollsBackAndRethrowsWhenTheBodyThrows() throws {
        let failure = TestFailure(message: "boom \(UUID())")
        #expect(throws: failure) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (?)", ["a"])
                throw failure
            }
        }
        #expect(!db.isInTransaction)
        #expect(recorder.statements == ["BEGIN IMMEDIATE", "INSERT INTO t VALUES (?)", "ROLLBACK"])
        #expect(try values().isEmpty)
    }

    @Test func aFailingStatementRollsBackEverything() throws {
        try db.execute("CREATE TABLE u(x UNIQUE)")
        try db.execute("INSERT INTO u VALUES (1)")
        expectDatabaseError(.constraint) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (?)", ["a"])
                try db.execute("INSERT INTO u VALUES (?)", [1])
            }
        }
        #expect(try values().isEmpty)
        #expect(try count(db, "SELECT count(*) FROM u") == 1)
    }

    @Test func nestedTransactionsAreSavepoints() throws {
        try db.transaction {
            try db.execute("INSERT INTO t VALUES (?)", ["outer before"])
            do {
                try db.transaction {
                    try db.execute("INSERT INTO t VALUES (?)", ["inner"])
                    #expect(try values().contains("inner"))
                    throw TestFailure()
                }
                Issue.record("the inner transaction should have thrown")
            } catch is TestFailure {
                // The outer body handles the inner failure and carries on.
            }
            #expect(db.isInTransaction)
            try db.execute("INSERT INTO t VALUES (?)", ["outer after"])
        }
        let statements = recorder.statements
        #expect(try values() == ["outer before", "outer after"])
        #expect(statements.first == "BEGIN IMMEDIATE")
        #expect(statements.last == "COMMIT")
        #expect(statements.contains { $0.hasPrefix("SAVEPOINT ") })
        #expect(statements.contains { $0.hasPrefix("ROLLBACK TO ") })
        #expect(statements.filter { $0 == "BEGIN IMMEDIATE" }.count == 1)
    }

    @Test func aSuccessfulInnerTransactionIsUndoneWithTheOuterOne() throws {
        #expect(throws: TestFailure.self) {
            try db.transaction {
                try db.transaction { try db.execute("INSERT INTO t VALUES (?)", ["inner"]) }
                try db.transaction {
                    try db.transaction { try db.execute("INSERT INTO t VALUES (?)", ["deeper"]) }
                }
                #expect(try values() == ["inner", "deeper"])
                throw TestFailure()
            }
        }
        #expect(try values().isEmpty)
        #expect(!db.isInTransaction)
    }

    @Test func savepointsCanBeReusedAfterFailures() throws {
        try db.transaction {
            for i in 0..<5 {
                try? db.transaction {
                    try db.execute("INSERT INTO t VALUES (?)", ["\(i)"])
                    if i.isMultiple(of: 2) { throw TestFailure() }
                }
            }
        }
        #expect(try values() == (0..<5).filter { !$0.isMultiple(of: 2) }.map(String.init))
        // And the next top-level transaction starts cleanly.
        try db.transaction { try db.execute("INSERT INTO t VALUES (?)", ["next"]) }
        #expect(try values().last == "next")
    }

    @Test func aRawTransactionStatementInsideTheBodyIsAMisuseAndRollsEverythingBack() throws {
        for raw in ["ROLLBACK", "COMMIT", "END", "BEGIN", "SAVEPOINT activeobjects_9", "RELEASE activeobjects_0"] {
            recorder.removeAll()
            expectActiveObjectError({
                try db.transaction {
                    try db.execute("INSERT INTO t VALUES (?)", ["a"])
                    try db.execute(raw)
                    try db.execute("INSERT INTO t VALUES (?)", ["never"])
                }
            }, matches: \.isMisuse)
            #expect(!db.isInTransaction, "\(raw)")
            // The raw statement never ran: the transaction rolled back as a whole.
            #expect(try values() == [], "\(raw)")
            // Never ran (the one ROLLBACK is the transaction's own).
            #expect(recorder.statements.filter { $0 == raw }.count == (raw == "ROLLBACK" ? 1 : 0), "\(raw) ran")
        }
        // The user's own savepoints stay allowed.
        try db.transaction {
            try db.execute("SAVEPOINT mine")
            try db.execute("INSERT INTO t VALUES (?)", ["kept"])
            try db.execute("RELEASE mine")
        }
        #expect(try values() == ["kept"])
        // The depth bookkeeping is intact: the next transaction is a real one.
        recorder.removeAll()
        try db.transaction { try db.execute("INSERT INTO t VALUES (?)", ["b"]) }
        #expect(recorder.statements.first == "BEGIN IMMEDIATE")
    }

    @Test func anErrorThatMadeSQLiteRollBackIsThrownAndNothingIsPartial() throws {
        let dir = try TemporaryDirectory()
        let recorder = TraceRecorder()
        let db = try Database(path: dir.path("full.sqlite"), options: tracedOptions(recorder))
        try db.execute("CREATE TABLE t(x)")
        for i in 0..<10 { try db.execute("INSERT INTO t VALUES (?)", [i]) }
        let pages = try count(db, "PRAGMA page_count")
        let pageSize = try count(db, "PRAGMA page_size")
        try db.execute("PRAGMA max_page_count = \(pages + 2)")
        let big = Data(count: pageSize * 20)

        recorder.removeAll()
        var sqliteRolledBack = false
        let error = expectDatabaseError(.full) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (?)", ["small"])
                do {
                    try db.execute("INSERT INTO t VALUES (?)", [big])
                } catch {
                    sqliteRolledBack = !db.isInTransaction
                    throw error
                }
            }
        }
        #expect(error?.sql == "INSERT INTO t VALUES (?)")
        #expect(!db.isInTransaction)
        if sqliteRolledBack {
            // No ROLLBACK after SQLite already rolled back.
            #expect(!recorder.statements.contains("ROLLBACK"))
        } else {
            #expect(recorder.statements.last == "ROLLBACK")
        }
        #expect(try count(db, "SELECT count(*) FROM t") == 10)
        #expect(try count(db, "SELECT count(*) FROM t WHERE x = 'small'") == 0)

        // Usable afterwards.
        try db.execute("PRAGMA max_page_count = 1000000")
        try db.transaction { try db.execute("INSERT INTO t VALUES (?)", [big]) }
        #expect(try count(db, "SELECT count(*) FROM t") == 11)
        #expect(try db.scalar("PRAGMA integrity_check") == "ok")
    }

    @Test func aFullErrorCaughtInsideTheBody() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("full.sqlite"))
        try db.execute("CREATE TABLE t(x)")
        let pages = try count(db, "PRAGMA page_count")
        let pageSize = try count(db, "PRAGMA page_size")
        try db.execute("PRAGMA max_page_count = \(pages + 2)")
        var stillInTransaction = true
        var threw = false
        do {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (?)", ["small"])
                expectDatabaseError(.full) { try db.execute("INSERT INTO t VALUES (?)", [Data(count: pageSize * 20)]) }
                stillInTransaction = db.isInTransaction
            }
        } catch let error as DatabaseError {
            // Allowed only when SQLite had already ended the transaction.
            #expect(!stillInTransaction, "\(error)")
            threw = true
        }
        // A transaction that SQLite ended must not look committed.
        #expect(threw == !stillInTransaction)
        let small = try count(db, "SELECT count(*) FROM t WHERE x = 'small'")
        // Either the statement alone was undone (the rest commits) or the whole transaction was.
        #expect(small == (stillInTransaction ? 1 : 0))
        #expect(try count(db, "SELECT count(*) FROM t") == small)
        #expect(!db.isInTransaction)
    }

    @Test func closingInsideTheBodyEndsTheTransactionWithoutCommitting() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("closed.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t(x)")
        expectActiveObjectError({
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (1)")
                try db.close()
            }
        }, matches: \.isDatabaseClosed)
        #expect(db.isClosed)
        let reopened = try Database(path: path)
        #expect(try count(reopened, "SELECT count(*) FROM t") == 0)
    }

    @Test func theSameThreadMayUseTheDatabaseInsideTheBody() throws {
        try db.transaction {
            try db.execute("INSERT INTO t VALUES (?)", ["a"])
            #expect(try db.rows("SELECT x FROM t").count == 1)
            let n: Int? = try db.scalar("SELECT count(*) FROM t")
            #expect(n == 1)
            #expect(db.changes == 1)
        }
    }
}
