import Foundation
import Testing
@testable import ActiveObjects

/// Opening, options, raw SQL and closing.
@Suite struct DatabaseTests {
    // MARK: Opening

    @Test func openingAMissingFileCreatesIt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("new.sqlite")
        #expect(!FileManager.default.fileExists(atPath: path))
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t(x)")
        try db.execute("INSERT INTO t VALUES (?)", [42])
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(db.path == path)
        try db.close()

        let reopened = try Database(path: path)
        #expect(try reopened.scalar("SELECT x FROM t") == 42)
    }

    @Test func inMemoryDatabasesAreIndependent() throws {
        let first = try Database.inMemory()
        let second = try Database.inMemory()
        try first.execute("CREATE TABLE t(x)")
        try first.execute("INSERT INTO t VALUES (1)")
        #expect(try count(first, "SELECT count(*) FROM t") == 1)
        // The second database does not see the first one's table.
        expectDatabaseError(.error) { try second.execute("SELECT * FROM t") }
        try second.execute("CREATE TABLE t(x)")
        #expect(try count(second, "SELECT count(*) FROM t") == 0)
    }

    @Test func memoryPathOpensAPrivateInMemoryDatabase() throws {
        let db = try Database(path: ":memory:")
        let other = try Database(path: ":memory:")
        try db.execute("CREATE TABLE t(x)")
        let file: String? = try db.scalar("SELECT file FROM pragma_database_list WHERE name = 'main'")
        #expect(file == "")   // SQLite reports no file for an in-memory database
        #expect(try count(other, "SELECT count(*) FROM sqlite_schema") == 0)
        #expect(try db.scalar("PRAGMA journal_mode") == "memory")
    }

    @Test func filesUseWALByDefault() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("wal.sqlite"))
        #expect(try db.scalar("PRAGMA journal_mode") == "wal")
    }

    @Test func deleteJournalModeOption() throws {
        let dir = try TemporaryDirectory()
        var options = Database.Options()
        options.journalMode = .delete
        let db = try Database(path: dir.path("delete.sqlite"), options: options)
        #expect(try db.scalar("PRAGMA journal_mode") == "delete")
        try db.execute("CREATE TABLE t(x)")
        try db.execute("INSERT INTO t VALUES (1)")
        // No write-ahead log is created in rollback-journal mode.
        #expect(!FileManager.default.fileExists(atPath: dir.path("delete.sqlite-wal")))
    }

    @Test func busyTimeoutDefaultsToFiveSecondsAndIsConfigurable() throws {
        let defaults = Database.Options()
        #expect(defaults.busyTimeout == .seconds(5))
        let db = try Database.inMemory()
        #expect(try db.scalar("PRAGMA busy_timeout") == 5000)

        var options = Database.Options()
        options.busyTimeout = .milliseconds(250)
        #expect(options.busyTimeout == .milliseconds(250))
        let short = try Database.inMemory(options: options)
        #expect(try short.scalar("PRAGMA busy_timeout") == 250)
    }

    @Test func foreignKeysAreOnByDefault() throws {
        let db = try Database.inMemory()
        #expect(try db.scalar("PRAGMA foreign_keys") == 1)
        try db.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY)")
        try db.execute("CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id))")
        expectDatabaseError(.constraint) { try db.execute("INSERT INTO child(parent_id) VALUES (?)", [99]) }
        #expect(try count(db, "SELECT count(*) FROM child") == 0)

        var options = Database.Options()
        options.foreignKeys = false
        let lax = try Database.inMemory(options: options)
        #expect(try lax.scalar("PRAGMA foreign_keys") == 0)
        try lax.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY)")
        try lax.execute("CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id))")
        try lax.execute("INSERT INTO child(parent_id) VALUES (?)", [99])
        #expect(try count(lax, "SELECT count(*) FROM child") == 1)
    }

    @Test func optionsKeepTheirValues() throws {
        var options = Database.Options()
        options.statementCacheSize = 7
        options.dateStrategy = .unixMilliseconds
        options.journalMode = .delete
        let db = try Database.inMemory(options: options)
        #expect(db.options.statementCacheSize == 7)
        #expect(db.options.dateStrategy == .unixMilliseconds)
        #expect(db.options.journalMode == .delete)
        // The date strategy is the one values are written with.
        let date = Date(timeIntervalSince1970: 1_411_467_072.5)
        #expect(try db.scalar("SELECT typeof(?)", [date]) == "integer")
        #expect(try db.scalar("SELECT ?", [date]) == Int64(1_411_467_072_500))
    }

    @Test func readOnlyRefusesWrites() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("ro.sqlite")
        do {
            let writer = try Database(path: path)
            try writer.execute("CREATE TABLE t(x)")
            try writer.execute("INSERT INTO t VALUES (1)")
            try writer.close()
        }
        let before = try fileBytes(path)
        var options = Database.Options()
        options.readOnly = true
        let db = try Database(path: path, options: options)
        #expect(try count(db, "SELECT count(*) FROM t") == 1)
        expectDatabaseError(.readOnly) { try db.execute("INSERT INTO t VALUES (2)") }
        expectDatabaseError(.readOnly) { try db.execute("CREATE TABLE u(y)") }
        expectDatabaseError(.readOnly) { try db.transaction { try db.execute("DELETE FROM t") } }
        #expect(try count(db, "SELECT count(*) FROM t") == 1)
        try db.close()
        #expect(try fileBytes(path) == before)
    }

    @Test func readOnlyDoesNotCreateAMissingFile() throws {
        let dir = try TemporaryDirectory()
        var options = Database.Options()
        options.readOnly = true
        expectDatabaseError(.cannotOpen) { _ = try Database(path: dir.path("missing.sqlite"), options: options) }
        #expect(try dir.fileNames().isEmpty)
    }

    // MARK: Trace

    @Test func traceReceivesEachStatementWithPlaceholdersAndADuration() throws {
        let recorder = TraceRecorder()
        let db = try Database.inMemory(options: tracedOptions(recorder))
        recorder.removeAll()   // forget the statements run while opening

        let insert = "INSERT INTO t(name) VALUES (?)"
        let secret = "secret-value-\(UUID().uuidString)"
        try db.execute("CREATE TABLE t(name TEXT)")
        try db.execute(insert, [secret])
        let rows = try db.rows("SELECT name FROM t WHERE name = ?", [secret])
        #expect(rows.count == 1)
        // A statement that runs long enough to be measurable.
        let slow = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ?) SELECT count(*) FROM c"
        let clock = ContinuousClock()
        let start = clock.now
        let n: Int? = try db.scalar(slow, [200_000])
        let elapsed = clock.now - start
        #expect(n == 200_000)

        let entries = recorder.all
        #expect(entries.map(\.sql) == [
            "CREATE TABLE t(name TEXT)", insert, "SELECT name FROM t WHERE name = ?", slow,
        ])
        #expect(!entries.contains { $0.sql.contains(secret) })
        #expect(entries.allSatisfy { $0.duration >= .zero })
        let slowDuration = try #require(entries.last?.duration)
        #expect(slowDuration > .zero)
        #expect(slowDuration <= elapsed)
    }

    @Test func traceReportsFailingStatementsToo() throws {
        let recorder = TraceRecorder()
        let db = try Database.inMemory(options: tracedOptions(recorder))
        try db.execute("CREATE TABLE t(x UNIQUE)")
        try db.execute("INSERT INTO t VALUES (?)", [1])
        recorder.removeAll()
        expectDatabaseError(.constraint) { try db.execute("INSERT INTO t VALUES (?)", [1]) }
        #expect(recorder.statements == ["INSERT INTO t VALUES (?)"])
    }

    // MARK: Template copy

    @Test func templateIsCopiedWhenTheDestinationIsMissing() throws {
        let dir = try TemporaryDirectory()
        let template = dir.path("template.sqlite")
        var options = Database.Options()
        options.journalMode = .delete   // keep the template in a single file
        do {
            let db = try Database(path: template, options: options)
            try db.execute("CREATE TABLE t(x)")
            try db.execute("INSERT INTO t VALUES ('from template')")
            try db.close()
        }
        let templateBytes = try fileBytes(template)
        let destination = dir.path("copy.sqlite")
        let copy = try Database(path: destination, copyingTemplateAt: template)
        #expect(try copy.scalar("SELECT x FROM t") == "from template")
        try copy.execute("INSERT INTO t VALUES ('mine')")
        #expect(try count(copy, "SELECT count(*) FROM t") == 2)
        try copy.close()
        // The template itself was not modified, and no partial copy remains.
        #expect(try fileBytes(template) == templateBytes)
        #expect(!(try dir.fileNames()).contains { $0.contains(".partial") })
    }

    @Test func templateNeverOverwritesAnExistingFile() throws {
        let dir = try TemporaryDirectory()
        let template = dir.path("template.sqlite")
        let destination = dir.path("user.sqlite")
        var options = Database.Options()
        options.journalMode = .delete
        for (path, value) in [(template, "template"), (destination, "user data")] {
            let db = try Database(path: path, options: options)
            try db.execute("CREATE TABLE t(x)")
            try db.execute("INSERT INTO t VALUES (?)", [value])
            try db.close()
        }
        let userBytes = try fileBytes(destination)
        let db = try Database(path: destination, copyingTemplateAt: template, options: options)
        #expect(try db.scalar("SELECT x FROM t") == "user data")
        try db.close()
        #expect(try fileBytes(destination) == userBytes)

        // An existing destination needs no template at all.
        let again = try Database(path: destination, copyingTemplateAt: dir.path("no-such-template.sqlite"), options: options)
        #expect(try again.scalar("SELECT x FROM t") == "user data")
    }

    @Test func missingTemplateThrows() throws {
        let dir = try TemporaryDirectory()
        let destination = dir.path("user.sqlite")
        expectActiveObjectError({
            _ = try Database(path: destination, copyingTemplateAt: dir.path("no-such-template.sqlite"))
        }, matches: \.isInvalidArgument)
        #expect(!FileManager.default.fileExists(atPath: destination))
        #expect(try dir.fileNames().isEmpty)
    }

    // MARK: Raw SQL

    @Test func executeRowsAndScalarBindArgumentsInOrder() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE person(name TEXT, age INTEGER)")
        let people: [(String, Int)] = [("Ann", 25), ("Bob", 31), ("Cid", 40), ("Dee", 31)]
        for (name, age) in people {
            try db.execute("INSERT INTO person(name, age) VALUES (?, ?)", [name, age])
        }
        let threshold = 30
        let rows = try db.rows("SELECT name, age FROM person WHERE age > ? ORDER BY name", [threshold])
        let expected = people.filter { $0.1 > threshold }.sorted { $0.0 < $1.0 }
        #expect(rows.count == expected.count)
        for (row, person) in zip(rows, expected) {
            #expect(try row["name"] as String == person.0)
            #expect(try row["age"] as Int == person.1)
        }
        let total: Int? = try db.scalar("SELECT sum(age) FROM person WHERE name <> ?", ["Ann"])
        #expect(total == people.filter { $0.0 != "Ann" }.map(\.1).reduce(0, +))
        try db.execute("UPDATE person SET age = age + 1 WHERE name = ?", ["Bob"])
        #expect(db.changes == 1)
        #expect(try db.scalar("SELECT age FROM person WHERE name = ?", ["Bob"]) == 32)
        let none: Int? = try db.scalar("SELECT age FROM person WHERE name = ?", ["Nobody"])
        #expect(none == nil)
    }

    @Test func wrongArgumentCountThrows() throws {
        let db = try Database.inMemory()
        expectActiveObjectError({ _ = try db.rows("SELECT ?, ?", [1]) }, matches: \.isInvalidSQL)
        expectActiveObjectError({ _ = try db.rows("SELECT 1", [1]) }, matches: \.isInvalidSQL)
        // The statement is usable afterwards (no stale binding or open read).
        #expect(try db.scalar("SELECT ? + ?", [1, 2]) == 3)
    }

    @Test func aSecondStatementIsRefusedAndNotExecuted() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(x)")
        try db.execute("INSERT INTO t VALUES (1)")
        expectActiveObjectError({ try db.execute("SELECT 1; DROP TABLE t") }, matches: \.isInvalidSQL)
        expectActiveObjectError({ _ = try db.rows("SELECT x FROM t; DELETE FROM t") }, matches: \.isInvalidSQL)
        expectActiveObjectError({ let _: Int? = try db.scalar("SELECT 1; INSERT INTO t VALUES (2)") },
                                matches: \.isInvalidSQL)
        // Not even the first statement ran.
        expectActiveObjectError({ try db.execute("INSERT INTO t VALUES (3); SELECT 1") }, matches: \.isInvalidSQL)
        #expect(try count(db, "SELECT count(*) FROM t") == 1)
        #expect(try db.scalar("SELECT x FROM t") == 1)
    }

    @Test func commentsAndWhitespaceAfterAStatementAreAccepted() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(x);  \n")
        try db.execute("INSERT INTO t VALUES (?); -- a trailing comment", [7])
        try db.execute("INSERT INTO t VALUES (?) /* block */ ;;  \n\t", [8])
        let sum: Int? = try db.scalar("SELECT sum(x) FROM t; -- done\n/* really */")
        #expect(sum == 15)
    }

    @Test func emptySQLIsRefused() throws {
        let db = try Database.inMemory()
        expectActiveObjectError({ try db.execute("  -- nothing\n") }, matches: \.isInvalidSQL)
    }

    @Test func doubleQuotedStringLiteralsAreOff() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(x)")
        try db.execute("INSERT INTO t VALUES (1)")
        let error = expectDatabaseError(.error) { _ = try db.rows("SELECT \"nosuchcolumn\" FROM t") }
        #expect(error?.message.contains("nosuchcolumn") == true)
        // A double-quoted identifier that exists is still a column.
        #expect(try db.scalar("SELECT \"x\" FROM t") == 1)
        // DDL too.
        expectDatabaseError(.error) { try db.execute("CREATE INDEX i ON t(\"nosuchcolumn\")") }
    }

    @Test func syntaxErrorsCarryTheSQL() throws {
        let db = try Database.inMemory()
        let error = expectDatabaseError(.error) { try db.execute("SELEKT 1") }
        #expect(error?.sql == "SELEKT 1")
        #expect(error?.message.isEmpty == false)
    }

    // MARK: Closing

    @Test func closeIsIdempotentAndLaterCallsThrowDatabaseClosed() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("closing.sqlite"))
        try db.execute("CREATE TABLE t(x)")
        #expect(!db.isClosed)
        try db.close()
        #expect(db.isClosed)
        try db.close()
        #expect(db.isClosed)

        expectActiveObjectError({ try db.execute("INSERT INTO t VALUES (1)") }, matches: \.isDatabaseClosed)
        expectActiveObjectError({ _ = try db.rows("SELECT * FROM t") }, matches: \.isDatabaseClosed)
        expectActiveObjectError({ let _: Int? = try db.scalar("SELECT 1") }, matches: \.isDatabaseClosed)
        var ran = false
        expectActiveObjectError({ try db.transaction { ran = true } }, matches: \.isDatabaseClosed)
        #expect(!ran)
    }

    @Test func closingCheckpointsAndReleasesTheFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("released.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t(x)")
        try db.execute("INSERT INTO t VALUES (1)")
        try db.close()
        // The last connection to close removes the WAL after checkpointing.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let reopened = try Database(path: path)
        #expect(try count(reopened, "SELECT count(*) FROM t") == 1)
    }

    /// FTS5 prepares statements of its own on the connection; closing must finalize only
    /// ours (finalizing SQLite's too was a double free that aborted the process).
    @Test func closingADatabaseThatUsedAVirtualTableFinalizesOnlyItsOwnStatements() throws {
        let dir = try TemporaryDirectory()
        for path in [":memory:", dir.path("fts.sqlite")] {
            let db = try Database(path: path)
            try db.execute("CREATE VIRTUAL TABLE notes USING fts5(body)")
            try db.execute("INSERT INTO notes(body) VALUES (?)", ["hello full text"])
            let hits: Int? = try db.scalar("SELECT count(*) FROM notes WHERE notes MATCH ?", ["hello"])
            #expect(hits == 1)
            try db.close()
            #expect(db.isClosed)
        }
    }
}
