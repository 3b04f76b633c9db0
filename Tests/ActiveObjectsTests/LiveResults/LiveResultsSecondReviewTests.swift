import Foundation
import Testing
@testable import ActiveObjects

// Second review of issue 22 (changes after f2a129f). In the serialized suite of
// `LiveChangesTests` (the models share one database at a time).

extension LiveChangesTests {
    /// The schema check (`restartRowLog`'s query of `sqlite_master`) is run through the
    /// connection's statement path, so the user's trace handler is told about a statement the
    /// app never ran.
    @Test func secondReviewTheSchemaCheckIsNotTraced() async throws {
        let traced = LockedValue<[String]>([])
        var options = Database.Options()
        options.trace = { sql, _ in traced.withLock { $0.append(sql) } }
        try await withReviewDB(options) { db in
            try addItem("a", score: 1)
            let query = LiveItem.all.order(by: \.$score)
            let results = query.liveResults()
            #expect(await eventually { results.isLoaded })
            try await warmUp(results, query, db: db)
            try await db.execute("CREATE TABLE second_review_other (x)")
            try await db.execute("UPDATE live_item SET memo = 'after'")
            let (live, fresh) = try await settle(results, query)
            #expect(live == fresh)
            let schemaReads = traced.withLock { $0 }.filter { $0.contains("sqlite_temp_master") }
            #expect(schemaReads.isEmpty, "traced: \(schemaReads)")
            results.cancel()
        }
    }

    /// Single connection (in memory, and `maximumReaderCount = 0`, rollback journal): the schema
    /// check runs on the writer inside publishCommit; row-level reads still converge after DDL.
    @Test(arguments: [0, 1, 2])
    func secondReviewSchemaCheckOnOneConnection(mode: Int) async throws {
        try await withLiveResultsDB(opening: { path in
            switch mode {
            case 0:
                return try Database.inMemory()
            case 1:
                var options = Database.Options()
                options.maximumReaderCount = 0
                return try Database(path: path, options: options)
            default:
                var options = Database.Options()
                options.journalMode = .delete
                return try Database(path: path, options: options)
            }
        }) { db, _ in
            try addItem("a", score: 1)
            try addItem("b", score: 2)
            let query = LiveItem.where(\.$shown == true).order(by: \.$score)
            let results = query.liveResults()
            #expect(await eventually { results.isLoaded })
            try await warmUp(results, query, db: db)
            try await db.execute("CREATE TABLE second_review_other (x)")
            try await db.execute("UPDATE live_item SET name = 'B' WHERE name = 'b'")
            var (live, fresh) = try await settle(results, query)
            #expect(live == fresh)
            try await db.execute("UPDATE live_item SET shown = 0 WHERE name = 'a'")
            (live, fresh) = try await settle(results, query)
            #expect(live == fresh)
            results.cancel()
        }
    }
    /// (Checked, passes: a guard.) On a table without foreign keys (with them, SQLite deletes the REPLACEd row by
    /// the full path, which the update hook sees): a trigger with REPLACE, created in the
    /// transaction that fires it. The schema check runs only between transactions, and a schema
    /// change inside one only marks the schema unchecked: the transaction's rows stay "complete"
    /// and the row the REPLACE deleted stays in the live result.
    @Test(arguments: [false, true])
    func secondReviewAReplaceTriggerCreatedAndFiredInOneTransactionNoForeignKeys(temp: Bool) async throws {
        try await withLiveResultsDB { db, _ in
            try ReviewEntry.createTable()
            try await db.execute("CREATE UNIQUE INDEX review_entry_name ON review_entry(name)")
            let (query, results) = try await followEntries(db, warmingUpRank: 3)
            try await db.transaction {
                try db.execute("""
                    CREATE \(temp ? "TEMP " : "")TRIGGER second_review_rename AFTER INSERT ON live_tag
                    BEGIN UPDATE OR REPLACE review_entry SET name = 'a' WHERE name = 'b'; END
                    """)
                try db.execute("INSERT INTO live_tag (label) VALUES ('fires')")
            }
            let fresh = try await query.all().map(\.name)
            #expect(fresh == ["a", "w1"])
            #expect(await eventually(timeout: 3) { results.elements.map(\.name) == fresh },
                    "\(results.elements.map(\.name)) vs a fresh fetch's \(fresh)")
            // A later commit of another row does not repair it (it reads that row alone).
            try await db.execute("UPDATE review_entry SET name = 'w2' WHERE rank = 3")
            let later = try await query.all().map(\.name)
            #expect(await eventually(timeout: 3) { results.elements.map(\.name) == later },
                    "\(results.elements.map(\.name)) vs a fresh fetch's \(later)")
            results.cancel()
        }
    }
}
