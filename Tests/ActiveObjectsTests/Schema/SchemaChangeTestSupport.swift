import Foundation
import Testing
@testable import ActiveObjects

// Helpers of the schema-change suites (SchemaPlanTests, SafeRebuildTests,
// ModelEditCatalogueTests).

/// The statements of `statements` that write: DDL and DML, not reads, pragmas or transaction
/// control (`BEGIN`, `SAVEPOINT`, `RELEASE`, `COMMIT`, `ROLLBACK`).
func writingStatements(_ statements: [String]) -> [String] {
    let writers = ["CREATE", "DROP", "ALTER", "INSERT", "UPDATE", "DELETE", "REPLACE"]
    return statements.filter { sql in
        let first = sql.drop { $0.isWhitespace }.prefix { $0.isLetter }.uppercased()
        return writers.contains(first)
    }
}

/// Everything a file holds, comparable: each `sqlite_master` row, then every row of every
/// table (values with their storage classes) in rowid — or key — order.
func databaseDump(_ db: Database) throws -> [String] {
    var lines: [String] = []
    let objects = try db.rows("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name")
    for object in objects {
        lines.append("\(object.values)")
    }
    let tables = try db.rows("SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND type = 'table' ORDER BY name")
    for table in tables {
        let name: String = try table["name"]
        let withoutRowID: Int = try table["wr"]
        let order = withoutRowID == 1 ? "1" : "rowid"
        let rows = try db.rows("SELECT * FROM \"\(name.replacingOccurrences(of: "\"", with: "\"\""))\" ORDER BY \(order)")
        lines.append("\(name): \(rows.count) rows")
        for row in rows { lines.append("  \(row.values)") }
    }
    return lines
}

/// Runs `body` and returns the writing statements it ran (traced).
func writes(_ fx: SchemaFixture, during body: () throws -> Void) throws -> [String] {
    writingStatements(try fx.statements(during: body))
}

/// `PRAGMA foreign_keys` and `PRAGMA legacy_alter_table` of the writer, as a pair.
func connectionFlags(_ db: Database) throws -> [Int] {
    try db.withWriter { connection in
        [try connection.scalarValue("PRAGMA foreign_keys"), try connection.scalarValue("PRAGMA legacy_alter_table")]
            .map { value -> Int in if case .integer(let flag)? = value { Int(flag) } else { -1 } }
    }
}
