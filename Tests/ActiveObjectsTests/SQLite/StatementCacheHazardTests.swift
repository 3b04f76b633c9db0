import Foundation
import Testing
@testable import ActiveObjects

/// The database the models of this file use; each test sets its own.
private let hazardDatabase = Locked<Database?>(nil)

final class RelHazardRow: ActiveObject {
    override class var database: Database? { hazardDatabase.withLock { $0 } }
    @Column var name: String = ""
    @Column var value: Int = 0
}

/// Statement-cache hazards seen through the models: nested identical queries, fetches that
/// throw half-way, and schema changes made by another connection.
@Suite("Statement cache hazards (models)", .serialized)
struct StatementCacheHazardTests {
    struct Stop: Error {}

    static func open(_ folder: borrowing TemporaryDirectory, rows: Int) throws -> (Database, String) {
        let path = folder.path("hazard.sqlite")
        let db = try Database(path: path)
        hazardDatabase.withLock { $0 = db }
        try RelHazardRow.createTable()
        try db.transaction {
            for index in 0..<rows {
                let row = RelHazardRow()
                row.name = "row \(index)"
                row.value = index
                try row.save()
            }
        }
        return (db, path)
    }

    static func close() { hazardDatabase.withLock { $0 = nil } }

    /// From another connection: a write, then `PRAGMA wal_checkpoint(TRUNCATE)`; its first
    /// column is 1 when a reader (a statement left open) blocked it.
    static func checkpointBusy(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        var options = Database.Options()
        options.busyTimeout = .milliseconds(50)   // a blocked checkpoint waits for the busy handler
        let other = try Database(path: path, options: options)
        defer { try? other.close() }
        try other.execute("INSERT INTO rel_hazard_row(name, value) VALUES ('probe', -1)")
        try other.execute("DELETE FROM rel_hazard_row WHERE value = -1")
        let result = try other.rows("PRAGMA wal_checkpoint(TRUNCATE)")
        return try result[0][0] as Int
    }

    @Test func aNestedIdenticalQueryInsideEachVisitsEveryRowExactlyOnce() throws {
        let folder = try TemporaryDirectory()
        let (db, _) = try Self.open(folder, rows: 12)
        defer { Self.close() }
        let query = RelHazardRow.where(\.$value >= 0).order(by: \.$value)
        var outer: [Int] = []
        var innerCounts: [Int] = []
        var nestedEach = 0
        try query.each { row in
            outer.append(row.value)
            if outer.count > 12 { throw Stop() }   // a restarted loop would never end
            // The identical query, materialized, counted, and streamed inside the loop.
            innerCounts.append(try query.all().count)
            #expect(try query.count() == 12)
            #expect(try RelHazardRow.find(id: row.id!)?.value == row.value)
            try query.each { _ in nestedEach += 1 }
            let cursor = try query.cursor()
            #expect(try cursor.next()?.value == 0)
            cursor.close()
        }
        #expect(outer == Array(0..<12))
        #expect(innerCounts == Array(repeating: 12, count: 12))
        #expect(nestedEach == 144)
        // And a cursor around an `each` of the same query.
        let cursor = try query.cursor()
        var pulled: [Int] = []
        while let row = try cursor.next() {
            pulled.append(row.value)
            if pulled.count > 12 { break }
            var seen = 0
            try query.each { _ in seen += 1 }
            #expect(seen == 12)
        }
        #expect(pulled == Array(0..<12))
        // The cached statement was reset: the next use starts from the first row again.
        #expect(try query.all().map(\.value) == Array(0..<12))
        #expect(!db.isInTransaction)
        print("RELIABILITY statement-cache nested: 12-row each with identical all/count/each/cursor inside, each row once (144 inner rows)")
    }

    @Test func aFetchThatThrowsHalfWayLeavesNoReadTransactionOpen() throws {
        let folder = try TemporaryDirectory()
        let (db, path) = try Self.open(folder, rows: 10)
        defer { Self.close() }
        #expect(try Self.checkpointBusy(path) == 0)

        var failures = 0
        func expectThrowsThenCheckpoint<E: Error>(_ what: String, _ type: E.Type, _ body: () throws -> Void) throws {
            #expect(throws: E.self, "\(what)") { try body() }
            failures += 1
            #expect(!db.isInTransaction, "\(what) left a transaction open")
            #expect(try Self.checkpointBusy(path) == 0, "\(what) left a read transaction open: checkpoint blocked")
        }
        let query = RelHazardRow.order(by: \.$value)
        // A throwing `each` closure after a few rows.
        try expectThrowsThenCheckpoint("each throwing", Stop.self) {
            var seen = 0
            try query.each { _ in
                seen += 1
                if seen == 3 { throw Stop() }
            }
        }
        // A throwing `each` nested inside another `each`.
        try expectThrowsThenCheckpoint("nested each throwing", Stop.self) {
            try query.each { outer in
                try query.each { inner in if inner.value == 5 && outer.value == 2 { throw Stop() } }
            }
        }
        // A throwing transaction body in the middle of an `each`.
        try expectThrowsThenCheckpoint("transaction inside each", Stop.self) {
            try query.each { row in
                try db.transaction {
                    row.value += 100
                    try row.save()
                    if row.value == 104 { throw Stop() }
                }
            }
        }
        #expect(try RelHazardRow.where(\.$value >= 100).count() == 4)
        try db.execute("UPDATE rel_hazard_row SET value = value - 100 WHERE value >= 100")

        // A row that cannot be decoded in the middle of the table.
        try db.execute("UPDATE rel_hazard_row SET value = 'not a number' WHERE value = 6")
        let mismatch: (ActiveObjectError) -> Bool = { $0.isTypeMismatch }
        for (what, body) in [
            ("all", { _ = try query.all() }),
            ("findAll", { _ = try RelHazardRow.findAll() }),
            ("find(where:)", { _ = try RelHazardRow.find(where: ["name": "row 6"]) }),
            ("each", { try query.each { _ in } }),
            ("pluck", { _ = try query.pluck(\.$value) }),
            ("fetch(sql:)", { _ = try RelHazardRow.fetch(sql: "SELECT * FROM rel_hazard_row ORDER BY id") }),
            ("cursor", { let cursor = try query.cursor(); while try cursor.next() != nil {} }),
            ("page", { _ = try query.page(2, size: 5) }),
        ] as [(String, () throws -> Void)] {
            expectActiveObjectError(body, matches: mismatch)
            failures += 1
            #expect(try Self.checkpointBusy(path) == 0, "\(what) left a read transaction open: checkpoint blocked")
        }
        // A cursor abandoned half-way holds its read until it is closed, then releases it.
        let cursor = try query.cursor()
        _ = try cursor.next()
        #expect(try Self.checkpointBusy(path) == 1, "an open cursor is expected to hold its read")
        cursor.close()
        #expect(try Self.checkpointBusy(path) == 0)
        // The failures did not poison the cache: a repaired table reads normally.
        try db.execute("UPDATE rel_hazard_row SET value = 6 WHERE name = 'row 6'")
        #expect(try query.pluck(\.$value) == Array(0..<10))
        print("RELIABILITY statement-cache throw: \(failures) fetches failed half-way, checkpoint(TRUNCATE) busy = 0 after every one")
    }

    @Test func aSchemaChangedByAnotherConnectionBetweenTwoFetches() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("schema.sqlite")
        let db = try Database(path: path)
        hazardDatabase.withLock { $0 = db }
        defer { Self.close() }
        // A table with a legacy column in the middle, as another program could have made it.
        try db.execute("CREATE TABLE rel_hazard_row(id INTEGER PRIMARY KEY, legacy TEXT, name TEXT NOT NULL DEFAULT '', value INTEGER NOT NULL DEFAULT 0)")
        for index in 0..<4 {
            try db.execute("INSERT INTO rel_hazard_row(legacy, name, value) VALUES ('old', ?, ?)", ["row \(index)", index])
        }
        let selectStar = "SELECT * FROM rel_hazard_row ORDER BY id"
        func expectRows(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let viaModel = try RelHazardRow.order(by: \.$value).all()
            #expect(viaModel.map(\.name) == (0..<viaModel.count).map { "row \($0)" }, "\(what): model fetch", sourceLocation: sourceLocation)
            #expect(viaModel.map(\.value) == Array(0..<viaModel.count), "\(what): model fetch", sourceLocation: sourceLocation)
            let viaSQL = try RelHazardRow.fetch(sql: selectStar)
            #expect(viaSQL.map(\.name) == viaModel.map(\.name), "\(what): fetch(sql: SELECT *)", sourceLocation: sourceLocation)
            #expect(viaSQL.map(\.value) == viaModel.map(\.value), "\(what): fetch(sql: SELECT *)", sourceLocation: sourceLocation)
            #expect(viaSQL.allSatisfy { !$0.hasChanges }, "\(what): fetched objects look changed", sourceLocation: sourceLocation)
            #expect(try RelHazardRow.find(id: 1)?.name == "row 0", "\(what): find(id:)", sourceLocation: sourceLocation)
            #expect(try RelHazardRow.countAll() == viaModel.count, sourceLocation: sourceLocation)
        }
        try expectRows("before")

        let other = try Database(path: path)
        // 1. A column added at the end.
        try other.execute("ALTER TABLE rel_hazard_row ADD COLUMN extra TEXT DEFAULT 'x'")
        try expectRows("after ADD COLUMN")
        // 2. The legacy column in the middle dropped: SELECT * shifts every later column.
        try other.execute("ALTER TABLE rel_hazard_row DROP COLUMN legacy")
        try expectRows("after DROP COLUMN")
        // 3. The table rebuilt with its columns in another order.
        try other.transaction {
            try other.execute("CREATE TABLE rebuilt(value INTEGER NOT NULL DEFAULT 0, extra TEXT, name TEXT NOT NULL DEFAULT '', id INTEGER PRIMARY KEY)")
            try other.execute("INSERT INTO rebuilt(id, name, value, extra) SELECT id, name, value, extra FROM rel_hazard_row")
            try other.execute("DROP TABLE rel_hazard_row")
            try other.execute("ALTER TABLE rebuilt RENAME TO rel_hazard_row")
        }
        try expectRows("after the rebuild in another column order")

        // Writes through the model's cached INSERT and UPDATE still land in the right columns.
        let added = RelHazardRow()
        added.name = "row 4"
        added.value = 4
        try added.save()
        let first = try #require(try RelHazardRow.find(id: 1))
        first.name = "row 0"
        first.value = 0
        try first.save()
        try expectRows("after writes")
        #expect(try other.rows("SELECT name, value FROM rel_hazard_row WHERE id = ?", [added.id!]).map { "\(try $0["name"] as String)=\(try $0["value"] as Int)" } == ["row 4=4"])
        print("RELIABILITY statement-cache schema: ADD COLUMN, DROP COLUMN and a reordered rebuild by another connection; model fetch and fetch(sql: SELECT *) stay correct")
    }
}
