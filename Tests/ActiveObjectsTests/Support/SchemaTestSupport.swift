import Foundation
import Testing
@testable import ActiveObjects

// Helpers shared by the schema-evolution and relation suites (MigratorTests,
// SchemaMigrationTests, TableRebuildTests, LegacyFileTests, RelationTests,
// EagerLoadingTests, ForeignKeyTests).
//
// Tests run in parallel, so no test touches `ActiveObject.defaultDatabase`. Instead every
// model of these suites subclasses `SchemaTestModel`, whose `database` is a task-local value
// that each test binds to its own private `Database` with `SchemaFixture.run { … }`.

/// The database of the test currently running on this task.
enum SchemaTestContext {
    @TaskLocal static var database: Database?
}

/// Base class of the test models of these suites: lives in the current test's database.
class SchemaTestModel: ActiveObject {
    override class var database: Database? { SchemaTestContext.database }
}

/// One test's private database (in memory unless a path is given), with a trace recorder.
struct SchemaFixture {
    let db: Database
    let trace: TraceRecorder
    /// The folder of a file database opened with a ``TestStorage`` (removed with the fixture).
    var folder: TemporaryFolder?

    init(path: String? = nil, foreignKeys: Bool = true) throws {
        let trace = TraceRecorder()
        var options = tracedOptions(trace)
        options.foreignKeys = foreignKeys
        db = try path.map { try Database(path: $0, options: options) } ?? Database.inMemory(options: options)
        self.trace = trace
    }

    /// A fixture on a database of the kind `storage`.
    init(_ storage: TestStorage, foreignKeys: Bool = true) throws {
        let trace = TraceRecorder()
        var options = tracedOptions(trace)
        options.foreignKeys = foreignKeys
        (db, folder) = try storage.open("fixture.sqlite", options: options)
        self.trace = trace
    }

    init(database: Database, trace: TraceRecorder) {
        db = database
        self.trace = trace
    }

    /// Runs `body` with the test models bound to this fixture's database.
    @discardableResult
    func run<T>(_ body: () throws -> T) throws -> T {
        try SchemaTestContext.$database.withValue(db, operation: body)
    }

    /// The SQL traced while `body` ran.
    func statements(during body: () throws -> Void) throws -> [String] {
        trace.removeAll()
        try run(body)
        return trace.statements
    }

    /// The SELECT statements traced while `body` ran.
    func selects(during body: () throws -> Void) throws -> [String] {
        try statements(during: body).filter { $0.uppercased().hasPrefix("SELECT") }
    }
}

/// One line of `PRAGMA table_info`, comparable.
struct ColumnShape: Hashable, CustomStringConvertible {
    var name: String
    var type: String
    var notNull: Bool
    var defaultValue: String?
    var primaryKey: Bool
    var description: String {
        "\(name) \(type)\(notNull ? " NOT NULL" : "")\(defaultValue.map { " DEFAULT \($0)" } ?? "")\(primaryKey ? " PK" : "")"
    }
}

func tableInfo(_ db: Database, _ table: String) throws -> [ColumnShape] {
    try db.rows("PRAGMA table_info(\"\(table)\")").map { row in
        ColumnShape(name: try row["name"], type: try row["type"], notNull: (try row["notnull"] as Int) != 0,
                    defaultValue: try row["dflt_value"], primaryKey: (try row["pk"] as Int) != 0)
    }
}

/// The column names of a table, in order.
func columnNames(_ db: Database, _ table: String) throws -> [String] {
    try tableInfo(db, table).map(\.name)
}

/// `name` (unique?) of each index on `table`, from `PRAGMA index_list`, sorted by name.
struct IndexShape: Hashable, CustomStringConvertible {
    var name: String
    var unique: Bool
    var columns: [String]
    var description: String { "\(name)\(unique ? " UNIQUE" : "")(\(columns.joined(separator: ",")))" }
}

func indexList(_ db: Database, _ table: String) throws -> [IndexShape] {
    try db.rows("PRAGMA index_list(\"\(table)\")").map { row in
        let name: String = try row["name"]
        let columns: [String] = try db.rows("PRAGMA index_info(\"\(name)\")").map { try $0["name"] }
        return IndexShape(name: name, unique: (try row["unique"] as Int) != 0, columns: columns)
    }.sorted { $0.name < $1.name }
}

/// Everything `sqlite_master` says about a table and its indexes and triggers.
func masterSQL(_ db: Database, _ table: String) throws -> [String] {
    try db.rows("SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master WHERE tbl_name = ? ORDER BY type, name",
                [table]).map { try $0[0] }
}

/// Every row of a table as stored (values and storage classes), in rowid order.
func rawRows(_ db: Database, _ table: String) throws -> [[DatabaseValue]] {
    try db.rows("SELECT * FROM \"\(table)\" ORDER BY rowid").map(\.values)
}

/// Whether a table exists.
func tableExists(_ db: Database, _ table: String) throws -> Bool {
    try count(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [table]) == 1
}

/// The `PRAGMA foreign_key_list` of a table: (from, table, to, on_delete).
struct ForeignKeyShape: Hashable {
    var from: String
    var table: String
    var to: String?
    var onDelete: String
}

func foreignKeyList(_ db: Database, _ table: String) throws -> [ForeignKeyShape] {
    try db.rows("PRAGMA foreign_key_list(\"\(table)\")").map { row in
        ForeignKeyShape(from: try row["from"], table: try row["table"], to: try row["to"], onDelete: try row["on_delete"])
    }
}

extension ActiveObjectError {
    var isMigrationFailed: Bool { if case .migrationFailed = self { true } else { false } }
    var isDuplicateMigration: Bool { if case .duplicateMigration = self { true } else { false } }
}
