import CSQLite
import Foundation
import Testing
@testable import ActiveObjects

/// The prepared-statement cache: reuse, eviction, and nested use of one statement.
@Suite struct StatementCacheTests {
    @Test func repeatedSQLIsPreparedOnce() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(x)")
        let before = db.writer.preparedStatementCount
        let insert = "INSERT INTO t VALUES (?)"
        let repetitions = 25
        for i in 0..<repetitions { try db.execute(insert, [i]) }
        #expect(db.writer.preparedStatementCount == before + 1)
        for _ in 0..<repetitions { _ = try db.rows("SELECT x FROM t ORDER BY x") }
        for _ in 0..<repetitions { let _: Int? = try db.scalar("SELECT count(*) FROM t") }
        #expect(db.writer.preparedStatementCount == before + 3)
        // Reuse did not leak bindings or rows from one call into the next.
        #expect(try count(db, "SELECT count(*) FROM t") == repetitions)
        #expect(try db.rows("SELECT x FROM t ORDER BY x").map { try $0[0] as Int } == Array(0..<repetitions))
    }

    @Test func cacheSizeZeroPreparesEveryTime() throws {
        var options = Database.Options()
        options.statementCacheSize = 0
        let db = try Database.inMemory(options: options)
        let before = db.writer.preparedStatementCount
        let repetitions = 5
        for i in 0..<repetitions { #expect(try db.scalar("SELECT ?", [i]) == i) }
        #expect(db.writer.preparedStatementCount == before + repetitions)
    }

    @Test func leastRecentlyUsedStatementIsEvicted() throws {
        var options = Database.Options()
        options.statementCacheSize = 2
        let db = try Database.inMemory(options: options)
        let base = db.writer.preparedStatementCount
        let a = "SELECT 1", b = "SELECT 2", c = "SELECT 3"
        let _: Int? = try db.scalar(a)              // cache: a
        let _: Int? = try db.scalar(b)              // cache: a b
        let _: Int? = try db.scalar(a)              // a used again: b is now the oldest
        #expect(db.writer.preparedStatementCount == base + 2)
        let _: Int? = try db.scalar(c)              // evicts b
        #expect(db.writer.preparedStatementCount == base + 3)
        let _: Int? = try db.scalar(a)              // still cached
        #expect(db.writer.preparedStatementCount == base + 3)
        let three: Int? = try db.scalar(b)          // evicted: compiled again
        #expect(three == 2)
        #expect(db.writer.preparedStatementCount == base + 4)
    }

    @Test func aNestedIdenticalQueryDoesNotRestartTheOuterLoop() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(x)")
        let values = [3, 1, 4, 1, 5, 9, 2, 6]
        for value in values { try db.execute("INSERT INTO t VALUES (?)", [value]) }
        let sql = "SELECT x FROM t ORDER BY x"
        let sorted = values.sorted()

        var outer: [Int] = []
        var inner: [[Int]] = []
        try db.withWriter { connection in
            try connection.withStatement(sql, []) { statement in
                while try statement.step() {
                    guard case .integer(let x) = statement.value(at: 0) else {
                        throw TestFailure(message: "not an integer")
                    }
                    outer.append(Int(x))
                    // The same SQL while the outer statement is being stepped.
                    inner.append(try db.rows(sql).map { try $0[0] as Int })
                    // Guard against an endless loop if the outer statement were restarted.
                    if outer.count > values.count { break }
                }
            }
        }
        #expect(outer == sorted)
        #expect(inner == Array(repeating: sorted, count: sorted.count))
        // The cached statement was reset: the next use starts from the first row.
        #expect(try db.rows(sql).map { try $0[0] as Int } == sorted)
    }

    @Test func evictingAStatementThatIsBeingSteppedDoesNotDisturbIt() throws {
        var options = Database.Options()
        options.statementCacheSize = 1
        let db = try Database.inMemory(options: options)
        try db.execute("CREATE TABLE t(x)")
        for value in 1...4 { try db.execute("INSERT INTO t VALUES (?)", [value]) }
        var outer: [Int] = []
        try db.withWriter { connection in
            try connection.withStatement("SELECT x FROM t ORDER BY x", []) { statement in
                while try statement.step(), outer.count <= 4 {
                    guard case .integer(let x) = statement.value(at: 0) else { return }
                    outer.append(Int(x))
                    // Different SQL: takes the only cache slot from the outer statement.
                    let doubled: Int? = try db.scalar("SELECT ? * 2", [Int(x)])
                    #expect(doubled == Int(x) * 2)
                }
            }
        }
        #expect(outer == [1, 2, 3, 4])
        #expect(try db.rows("SELECT x FROM t ORDER BY x").map { try $0[0] as Int } == [1, 2, 3, 4])
    }

    @Test func aNestedIdenticalQueryInsideATransactionBody() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(x)")
        for value in 1...5 { try db.execute("INSERT INTO t VALUES (?)", [value]) }
        let sql = "SELECT x FROM t WHERE x >= ? ORDER BY x"
        var pairs: [[Int]] = []
        try db.transaction {
            try db.withWriter { connection in
                try connection.withStatement(sql, [.integer(1)]) { statement in
                    while try statement.step(), pairs.count <= 5 {
                        guard case .integer(let x) = statement.value(at: 0) else { return }
                        let rest = try db.rows(sql, [Int(x)]).map { try $0[0] as Int }
                        pairs.append(rest)
                    }
                }
            }
        }
        #expect(pairs == (1...5).map { Array($0...5) })
    }

    @Test func aStatementIsResetAfterAFailureSoNoReadStaysOpen() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("reset.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t(x)")
        for value in 1...3 { try db.execute("INSERT INTO t VALUES (?)", [value]) }
        // A conversion error in the middle of reading rows.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.withWriter { connection in
                try connection.withStatement("SELECT x FROM t", []) { statement in
                    _ = try statement.step()
                    throw Stop()
                }
            }
        }
        // The statement is no longer busy: no read transaction is held...
        #expect(try db.withWriter { try $0.cachedStatement("SELECT x FROM t").isBusy } == false)
        // ...so another connection can write and checkpoint the whole log.
        let other = try Database(path: path)
        try other.execute("INSERT INTO t VALUES (4)")
        let checkpoint = try other.rows("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(try checkpoint[0][0] as Int == 0)   // 0 = not blocked by a reader
        #expect(try count(db, "SELECT count(*) FROM t") == 4)
    }

    @Test func bindingsNeverLeakIntoTheNextUse() throws {
        let db = try Database.inMemory()
        let sql = "SELECT ?"
        #expect(try db.scalar(sql, ["first"]) == "first")
        // The same SQL with a fresh argument gives that argument, not the old one.
        #expect(try db.scalar(sql, ["second"]) == "second")
        // Every parameter must be bound: a stale binding can never be used.
        #expect(throws: ActiveObjectError.self) { try db.execute("SELECT ?, ?", ["only one"]) }
        let statement = try db.withWriter { try $0.cachedStatement(sql) }
        let compiled = try #require(statement.sqliteStatement)
        #expect(sqlite3_bind_parameter_count(compiled) == 1)
        // A large value is released as soon as the statement is reset.
        let large = String(repeating: "x", count: 64 * 1024)
        let value = try db.withWriter { connection in
            try connection.withStatement(sql, [.text(large)]) { _ in }
            let raw = try #require(statement.sqliteStatement)
            _ = sqlite3_step(raw)
            defer { sqlite3_reset(raw) }
            return sqlite3_column_type(raw, 0)
        }
        #expect(value == SQLITE_NULL)
    }

    @Test func schemaChangesByAnotherConnectionAreSeenByCachedSelectStar() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("schema.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t(a)")
        try db.execute("INSERT INTO t VALUES (1)")
        #expect(try db.rows("SELECT * FROM t")[0].columnNames == ["a"])
        let other = try Database(path: path)
        try other.execute("ALTER TABLE t ADD COLUMN b DEFAULT 'two'")
        let row = try #require(try db.rows("SELECT * FROM t").first)
        #expect(row.columnNames == ["a", "b"])
        #expect(try row["b"] as String == "two")
    }
}
