import Foundation
import Testing
@testable import ActiveObjects

// `Database.Options.reportsFullScans` (API.md §20): statements whose plan reads a whole table
// without an index are reported once per distinct SQL and database, from every connection,
// and nothing else is — on file databases with the default options (WAL, readers).

/// A table with an unindexed column (`note`), an indexed one (`code`) and the rowid.
final class ScanItem: ModelTestRecord {
    @Column var note = ""
    @Column(indexed: true) var code = 0
}

/// A model with a full-text index (API.md §20).
final class ScanArticle: ModelTestRecord {
    @Column var title = ""
    @Column var body = ""
    override class var searchableColumns: [String] { ["title", "body"] }
}

/// Collects the reports of `reportsFullScans`. Thread-safe.
final class FullScanCollector: Sendable {
    private let entries = LockedValue<[(sql: String, plan: String)]>([])

    /// The option's closure, appending to this collector.
    var hook: @Sendable (String, String) -> Void {
        { [entries] sql, plan in entries.withLock { $0.append((sql, plan)) } }
    }

    var reports: [(sql: String, plan: String)] { entries.withLock { $0 } }
    var sqls: [String] { reports.map(\.sql) }
}

/// Runs `body` with a fresh WAL file database (default options plus the reporter, when a
/// collector is given) for the test models, `scan_item` created and filled.
func withFullScanDB<T>(_ collector: FullScanCollector?, _ body: (Database) throws -> T) throws -> T {
    let folder = try TemporaryDirectory()
    var options = Database.Options()
    options.reportsFullScans = collector?.hook
    let db = try Database(path: folder.path("scans.sqlite"), options: options)
    defer { try? db.close() }
    return try ModelTestDB.$current.withValue(db) {
        try fillScanItems()
        return try body(db)
    }
}

/// Creates `scan_item` in the test's database and inserts 20 rows: notes `n0`…`n4` (4 rows
/// each), codes 0…19.
func fillScanItems() throws {
    try ScanItem.createTable()
    try ScanItem.insertAll((0..<20).map { index in
        let item = ScanItem()
        item.note = "n\(index % 5)"
        item.code = index
        return item
    })
    let saved = ScanItem()
    saved.note = "saved"
    saved.code = 100
    try saved.save()
    try saved.delete()
}

/// How many plans the connection a plain read runs on (this thread's reader) explained.
func readerExplainedPlans(_ db: Database) throws -> Int {
    try db.withAccess(.read) { $0.connection.explainedPlanCount }
}

@Suite struct FullScanReportTests {
    /// The synchronous half of the next test: many runs of one query, on this thread's reader,
    /// on the writer (a transaction) and in a read block.
    func runUnindexedQuerySynchronously(_ db: Database) throws {
        for _ in 0..<25 { #expect(try ScanItem.where(\.$note == "n1").all().count == 4) }
        let writerBefore = db.writer.explainedPlanCount
        let inTransaction = try db.transaction { try ScanItem.where(\.$note == "n1").all().count }
        #expect(inTransaction == 4)
        // Compiled on the writer for the first time, but checked already by this database.
        #expect(db.writer.explainedPlanCount == writerBefore)
        let inReadBlock = try db.read { try ScanItem.where(\.$note == "n1").all().count }
        #expect(inReadBlock == 4)
    }

    @Test func anUnindexedWhereIsReportedOnceWithItsSQLAndPlanFromEveryConnection() async throws {
        let collector = FullScanCollector()
        let folder = try TemporaryDirectory()
        var options = Database.Options()
        options.reportsFullScans = collector.hook
        let db = try Database(path: folder.path("scans.sqlite"), options: options)
        defer { try? db.close() }
        #expect(db.usesReaderConnections)
        try await ModelTestDB.$current.withValue(db) {
            try fillScanItems()
            #expect(collector.reports.isEmpty, "creating the table and inserting rows: \(collector.sqls)")
            try runUnindexedQuerySynchronously(db)
            // From async calls, on the library's queues.
            for _ in 0..<10 { #expect(try await ScanItem.where(\.$note == "n1").all().count == 4) }
            try await db.transaction { _ = try ScanItem.where(\.$note == "n1").all() }
            _ = try await db.rows("SELECT id FROM scan_item WHERE code = ?", [3])

            let reports = collector.reports
            try #require(reports.count == 1, "\(collector.sqls)")
            let report = reports[0]
            #expect(report.sql.contains("scan_item") && report.sql.contains("note"), "\(report.sql)")
            #expect(!report.sql.contains("n1"), "placeholders, never values: \(report.sql)")
            let lines = report.plan.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(lines.contains("SCAN scan_item") || lines.contains("SCAN TABLE scan_item"), "\(report.plan)")

            // Another unindexed statement is another report, once.
            for _ in 0..<5 { #expect(try await ScanItem.where(\.$note == "n2").count() == 4) }
            #expect(collector.reports.count == 2, "\(collector.sqls)")
        }
    }

    @Test func indexedLookupsFindByIDAndPrimaryKeysAreNotReported() throws {
        let collector = FullScanCollector()
        try withFullScanDB(collector) { db in
            let first = try #require(try ScanItem.where(\.$code == 3).all().first)
            #expect(first.code == 3)
            #expect(try ScanItem.where(\.$code > 17).count() == 2)
            #expect(try ScanItem.find(id: first.id!)?.code == 3)
            #expect(try ScanItem.find(ids: [1, 2, 3]).count == 3)
            #expect(try db.rows("SELECT note FROM scan_item WHERE id = ?", [first.id]).count == 1)
            #expect(try db.rows("SELECT note FROM scan_item WHERE rowid BETWEEN ? AND ?", [1, 4]).count == 4)
            #expect(try db.scalar("SELECT max(code) FROM scan_item") == 19)
            try db.execute("UPDATE scan_item SET note = ? WHERE id = ?", ["x", first.id])
            try db.execute("DELETE FROM scan_item WHERE code = ?", [19])
            first.note = "changed"
            try first.save()
            try first.reload()
            #expect(collector.reports.isEmpty, "\(collector.sqls)")
            // Each of those was explained (on the reader or the writer), and found clean.
            #expect(try readerExplainedPlans(db) + db.writer.explainedPlanCount > 0)
        }
    }

    @Test func rawSQLFullScansAreReportedReadsAndWritesAlike() throws {
        let collector = FullScanCollector()
        try withFullScanDB(collector) { db in
            #expect(try db.rows("SELECT * FROM scan_item WHERE note = ?", ["n1"]).count == 4)
            try db.execute("UPDATE scan_item SET code = code + 100 WHERE note = ?", ["n4"])
            try db.execute("DELETE FROM scan_item WHERE note LIKE ?", ["zz%"])
            // An alias and a correlated subquery (the shape of `joining`).
            #expect(try db.rows("SELECT s.code FROM scan_item AS s WHERE s.note = ?", ["n2"]).count == 4)
            #expect(try db.scalar(
                "SELECT count(*) FROM scan_item a WHERE EXISTS (SELECT 1 FROM \"scan_item\" AS \"_j0\" WHERE \"_j0\".note = a.note AND \"_j0\".id <> a.id)"
            ) == 20)
            // Again, all of them: nothing new.
            _ = try db.rows("SELECT * FROM scan_item WHERE note = ?", ["n3"])
            try db.execute("UPDATE scan_item SET code = code + 100 WHERE note = ?", ["n0"])
            try db.transaction { _ = try db.rows("SELECT * FROM scan_item WHERE note = ?", ["n0"]) }
        }
        let sqls = collector.sqls
        #expect(sqls == [
            "SELECT * FROM scan_item WHERE note = ?",
            "UPDATE scan_item SET code = code + 100 WHERE note = ?",
            "DELETE FROM scan_item WHERE note LIKE ?",
            "SELECT s.code FROM scan_item AS s WHERE s.note = ?",
            "SELECT count(*) FROM scan_item a WHERE EXISTS (SELECT 1 FROM \"scan_item\" AS \"_j0\" WHERE \"_j0\".note = a.note AND \"_j0\".id <> a.id)",
        ])
        let reports = collector.reports
        if reports.count == 5 {
            #expect(reports[3].plan.contains("SCAN s"), "\(reports[3].plan)")
            // Two levels: the subquery's scan is indented under it.
            #expect(reports[4].plan.contains("\n  "), "\(reports[4].plan)")
        }
    }

    @Test func theLibrarysSchemaReadsAndSQLitesTablesAreNotReported() throws {
        let collector = FullScanCollector()
        try withFullScanDB(collector) { db in
            // withFullScanDB created the table and inserted: nothing so far.
            #expect(collector.reports.isEmpty, "\(collector.sqls)")
            try ScanItem.createTable()                       // already there: schema reads only
            _ = try ScanItem.schemaPlan()
            #expect(try db.rows("SELECT name FROM sqlite_master WHERE type = 'table'").count >= 1)
            #expect(try db.rows("SELECT * FROM sqlite_schema WHERE sql LIKE ?", ["%scan%"]).count >= 1)
            #expect(try db.rows("SELECT * FROM pragma_table_info('scan_item')").count == 3)
            try db.execute("CREATE TABLE activeobjects_scratch(a)")
            _ = try db.rows("SELECT * FROM activeobjects_scratch WHERE a = 1")
            _ = try db.rows("SELECT * FROM ACTIVEOBJECTS_SCRATCH WHERE a = 2")
            // A recursive CTE scans itself, not a table; a constant row is no table.
            #expect(try db.rows("WITH c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3) SELECT n FROM c").count == 3)
            #expect(try db.scalar("SELECT 1 + 1") == 2)
            #expect(collector.reports.isEmpty, "\(collector.sqls)")
        }
    }

    @Test func searchesUseTheirIndexAndASearchForNoWordReadsNoRow() throws {
        let collector = FullScanCollector()
        try withFullScanDB(collector) { _ in
            try ScanArticle.createTable()
            let article = ScanArticle()
            article.title = "sqlite swift"
            try article.save()
            #expect(try ScanArticle.search("sqlite swi").limit(20).all().count == 1)
            #expect(try ScanArticle.search("sqlite").count() == 1)
            #expect(try ScanArticle.search("").all().isEmpty)
            article.body = "edited"
            try article.save()
            try article.delete()
            #expect(collector.reports.isEmpty, "\(collector.sqls)")
        }
    }

    @Test func statementsSQLiteDoesNotPlanRunAsBeforeAndAreNotExplained() throws {
        let collector = FullScanCollector()
        try withFullScanDB(collector) { db in
            let writerBefore = db.writer.explainedPlanCount
            try db.execute("CREATE INDEX scan_item_note ON scan_item(note)")
            try db.execute("DROP INDEX scan_item_note")
            try db.execute("CREATE TABLE scan_copy AS SELECT * FROM scan_item WHERE note = 'n1'")
            try db.execute("PRAGMA user_version = 7")
            #expect(try db.scalar("PRAGMA user_version") == 7)
            try db.execute("BEGIN")
            try db.execute("SAVEPOINT s1")
            try db.execute("RELEASE s1")
            try db.execute("COMMIT")
            try db.execute("ANALYZE")
            try db.execute("ALTER TABLE scan_copy ADD COLUMN extra TEXT")
            try db.execute("VACUUM")
            #expect(db.writer.explainedPlanCount == writerBefore)
            // The user's own EXPLAIN runs as written, and is not explained again.
            let readerBefore = try readerExplainedPlans(db)
            let plan = try db.rows("EXPLAIN QUERY PLAN SELECT * FROM scan_item WHERE note = ?", ["n1"])
            #expect(plan.contains { (try? $0["detail"] as String)?.contains("scan_item") == true })
            #expect(try db.rows("EXPLAIN SELECT 1").count > 0)
            #expect(try readerExplainedPlans(db) == readerBefore)
            // Errors are the statement's own, unchanged.
            let error = expectDatabaseError(.error) { _ = try db.rows("SELECT * FROM no_such_table WHERE x = 1") }
            #expect(error?.message.contains("no such table") == true)
            #expect(collector.reports.isEmpty, "\(collector.sqls)")
        }
    }

    @Test func withoutTheOptionNothingIsExplained() throws {
        try withFullScanDB(nil) { db in
            #expect(db.writer.fullScanReporter == nil)
            for _ in 0..<3 {
                _ = try ScanItem.where(\.$note == "n1").all()
                _ = try db.rows("SELECT * FROM scan_item WHERE note = ?", ["n2"])
                try db.transaction { _ = try db.rows("SELECT * FROM scan_item WHERE note = ?", ["n3"]) }
                try db.execute("UPDATE scan_item SET code = code WHERE note = ?", ["n4"])
            }
            #expect(try readerExplainedPlans(db) == 0)
            #expect(db.writer.explainedPlanCount == 0)
        }
    }

    @Test func concurrentQueriesReportEachStatementExactlyOnce() throws {
        let collector = FullScanCollector()
        try withFullScanDB(collector) { db in
            let statements = (0..<6).map { "SELECT id FROM scan_item WHERE note = ? AND \($0) = \($0)" }
            let failures = LockedValue<[String]>([])
            let group = DispatchGroup()
            for thread in 0..<8 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    do {
                        for round in 0..<30 {
                            let sql = statements[(thread + round) % statements.count]
                            if round % 5 == 0 {
                                try db.transaction { _ = try db.rows(sql, ["n1"]) }
                            } else {
                                _ = try db.rows(sql, ["n1"])
                            }
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }.start()
            }
            #expect(group.wait(timeout: .now() + 60) == .success, "the threads did not finish within 60 s")
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
            #expect(collector.sqls.sorted() == statements.sorted())
        }
    }

    // MARK: Reading plans

    /// Plan rows: (id, parent, detail).
    func rows(_ rows: [(Int32, Int32, String)]) -> [FullScanReporter.PlanRow] {
        rows.map { FullScanReporter.PlanRow(id: $0.0, parent: $0.1, detail: $0.2) }
    }

    func info(reads: Set<String>, writes: Set<String> = []) -> StatementInfo {
        StatementInfo(readTables: reads, writtenTables: writes, transactionControl: nil, changesSchema: false)
    }

    @Test func thePlanTextIsIndentedByDepth() {
        let plan = rows([(2, 0, "MATERIALIZE s"), (3, 2, "SCAN t"), (7, 2, "USE TEMP B-TREE FOR GROUP BY"),
                         (12, 0, "SCAN s"), (15, 0, "CORRELATED SCALAR SUBQUERY 1"), (18, 15, "SEARCH u USING INDEX i (a=?)")])
        #expect(FullScanReporter.planText(plan) == """
            MATERIALIZE s
              SCAN t
              USE TEMP B-TREE FOR GROUP BY
            SCAN s
            CORRELATED SCALAR SUBQUERY 1
              SEARCH u USING INDEX i (a=?)
            """)
    }

    @Test func fullScansAreToldFromIndexedScansSubqueriesAndCTEsInOldAndNewFormats() {
        let tables = info(reads: ["t", "u", "sqlite_master", "activeobjects_sync_log"])
        func scans(_ details: [String], _ sql: String = "") -> [String] {
            FullScanReporter.fullScans(in: rows(details.enumerated().map { (Int32($0.offset + 1), 0, $0.element) }),
                                       info: tables, sql: sql)
        }
        // SQLite 3.36 and later.
        #expect(scans(["SCAN t"]) == ["t"])
        #expect(scans(["SCAN main.t"]) == ["t"])
        #expect(scans(["SCAN t USING COVERING INDEX ta"]).isEmpty)
        #expect(scans(["SCAN t USING INDEX ta"]).isEmpty)
        #expect(scans(["SEARCH t USING INDEX ta (a=?)", "SEARCH u USING INTEGER PRIMARY KEY (rowid=?)"]).isEmpty)
        #expect(scans(["SCAN CONSTANT ROW"]).isEmpty)
        #expect(scans(["SCAN f VIRTUAL TABLE INDEX 0:M1"]).isEmpty)
        #expect(scans(["MATERIALIZE (subquery-1)", "SCAN (subquery-1)", "SCAN u"]) == ["u"])
        #expect(scans(["MATERIALIZE t", "SEARCH u USING INDEX x (a=?)", "SCAN t"]).isEmpty, "a CTE named like a table")
        #expect(scans(["CO-ROUTINE c", "SCAN c"]).isEmpty)
        #expect(scans(["SCAN x"], "SELECT * FROM t AS x WHERE b = 1") == ["t"])
        #expect(scans(["SCAN x"], "SELECT * FROM main.\"t\" x WHERE b = 1") == ["t"])
        #expect(scans(["MATERIALIZE m", "SCAN q"], "WITH m AS MATERIALIZED (SELECT * FROM t) SELECT * FROM m AS q").isEmpty)
        #expect(scans(["SCAN z"], "SELECT * FROM t WHERE b = 'z'").isEmpty, "a name that is no table nor alias")
        #expect(scans(["SCAN u", "SEARCH t USING AUTOMATIC COVERING INDEX (b=?) LEFT-JOIN"]) == ["u", "t"])
        #expect(scans(["SCAN t", "SCAN t"]) == ["t"])
        #expect(scans(["SCAN sqlite_master", "SCAN activeobjects_sync_log", "SCAN SQLITE_MASTER"]).isEmpty)
        #expect(FullScanReporter.fullScans(
            in: rows([(1, 0, "SCAN _activeobjects_rebuild_t"), (2, 0, "SCAN schema_migrations"), (3, 0, "SCAN Activeobjects_x")]),
            info: info(reads: ["_activeobjects_rebuild_t", "schema_migrations", "activeobjects_x"]), sql: "").isEmpty)
        // Before 3.36.
        #expect(scans(["SCAN TABLE t"]) == ["t"])
        #expect(scans(["SCAN TABLE t AS x"]) == ["t"])
        #expect(scans(["SCAN TABLE t USING COVERING INDEX ta"]).isEmpty)
        #expect(scans(["SCAN SUBQUERY 1"]).isEmpty)
        #expect(scans(["SCAN TABLE sqlite_master"]).isEmpty)
        // A table only written (DELETE … WHERE) is a table too.
        #expect(FullScanReporter.fullScans(in: rows([(1, 0, "SCAN w")]), info: info(reads: [], writes: ["w"]), sql: "") == ["w"])
    }

    @Test func theLibrarysCopiesIntoItsOwnTablesAreNotExplained() {
        #expect(FullScanReporter.fillsLibraryTable("INSERT INTO \"_activeobjects_rebuild_t\" (\"id\") SELECT rowid FROM \"t\""))
        #expect(FullScanReporter.fillsLibraryTable("INSERT INTO activeobjects_sync_log (tbl, pk) SELECT 't', id FROM \"t\""))
        #expect(FullScanReporter.fillsLibraryTable("insert or replace into main.activeobjects_sync_fields SELECT * FROM t"))
        #expect(!FullScanReporter.fillsLibraryTable("INSERT INTO t (a) SELECT a FROM activeobjects_sync_log"))
        #expect(!FullScanReporter.fillsLibraryTable("UPDATE t SET a = 1 WHERE b = 2"))
        #expect(!FullScanReporter.fillsLibraryTable("SELECT * FROM activeobjects_sync_log"))
    }

    @Test func statementsThatMatchNoRowAreNotExplained() {
        for sql in ["DELETE FROM \"t\" WHERE 0", "UPDATE t SET a = a WHERE 0;", "INSERT INTO t (a) SELECT a FROM t WHERE false\n",
                    "SELECT (SELECT max(x) FROM u) FROM t WHERE 0", "DELETE FROM t WHERE 0 RETURNING a",
                    "SELECT \"id\" FROM (SELECT \"t\".rowid AS \"rowid\", \"t\".*, NULL AS \"r\" FROM \"t\" WHERE 0) AS \"t\" ORDER BY \"r\""] {
            #expect(FullScanReporter.matchesNoRow(sql), "\(sql)")
        }
        for sql in ["DELETE FROM t WHERE a = 0", "SELECT * FROM t WHERE b IN (SELECT c FROM u WHERE 0)",
                    "SELECT a FROM t UNION SELECT a FROM u WHERE 0", "SELECT * FROM t WHERE a = 1 AND 0", "SELECT 0",
                    "SELECT * FROM t WHERE a = 1 AND b IN (SELECT c FROM u WHERE 0)", "SELECT * FROM t WHERE \"0\"",
                    "SELECT * FROM t WHERE 0 OR a = 1", "SELECT * FROM u JOIN (SELECT * FROM t WHERE 0) AS s",
                    "UPDATE t SET x = (SELECT y FROM u WHERE 0)", "SELECT * FROM t WHERE (0) OR 1",
                    "WITH c AS (SELECT * FROM t WHERE 0) SELECT * FROM c, u"] {
            #expect(!FullScanReporter.matchesNoRow(sql), "\(sql)")
        }
    }

    @Test func onlyStatementsSQLitePlansAreExplained() {
        for sql in ["SELECT 1", "  /* c */ -- line\n select 1", "WITH a AS (SELECT 1) SELECT * FROM a", "VALUES (1)",
                    "INSERT INTO t VALUES (1)", "REPLACE INTO t VALUES (1)", "update t set a = 1", "DELETE FROM t"] {
            #expect(FullScanReporter.isPlannable(sql), "\(sql)")
        }
        for sql in ["", "  ", "-- nothing", "PRAGMA user_version", "CREATE TABLE t(a)", "BEGIN", "COMMIT", "EXPLAIN SELECT 1",
                    "ATTACH 'x' AS y", "VACUUM", "ANALYZE", "DROP TABLE t", "\"select\"", "SAVEPOINT a"] {
            #expect(!FullScanReporter.isPlannable(sql), "\(sql)")
        }
    }
}
