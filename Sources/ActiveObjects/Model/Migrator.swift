import Foundation

/// Versioned schema migrations: named steps, each run at most once, in registration order,
/// each in its own transaction together with its bookkeeping row.
///
/// ```swift
/// var migrator = Migrator()
/// migrator.register("001-create-person") { db in try Person.createTable(in: db) }
/// migrator.register("002-index-age") { db in
///     try db.execute("CREATE INDEX person_age ON person(age)")
/// }
/// try migrator.migrate(db)                  // runs what has not run yet
/// try migrator.appliedMigrations(db)        // ["001-create-person", "002-index-age"]
/// ```
///
/// Rules:
/// - Applied step names are recorded in the table `schema_migrations` (name, applied_at).
/// - A step that throws is rolled back completely (its DDL too), is not recorded, and stops
///   the run with ``ActiveObjectError/migrationFailed(name:underlying:)``; later steps do not run.
/// - Steps run with foreign-key enforcement off (so a step may rebuild tables), and
///   `PRAGMA foreign_key_check` must find no violation before the step commits.
/// - A step registered after others already ran (even between them) still runs on the next
///   `migrate`: what counts is whether its name was recorded, not its position.
/// - Two steps with the same name make `migrate` throw ``ActiveObjectError/duplicateMigration(name:)``
///   before anything runs.
public struct Migrator {
    private var steps: [(name: String, body: (Database) throws -> Void)] = []

    /// Creates a migrator with no steps.
    public init() {}

    /// Registers a step. Names must be unique; they are what is recorded once the step ran.
    public mutating func register(_ name: String, _ body: @escaping (Database) throws -> Void) {
        steps.append((name, body))
    }

    /// The names of the registered steps, in order.
    public var registeredMigrations: [String] { steps.map(\.name) }

    /// Runs every registered step that has not run yet, in registration order.
    /// - Throws: ``ActiveObjectError/duplicateMigration(name:)``,
    ///   ``ActiveObjectError/migrationFailed(name:underlying:)`` naming the failing step.
    public func migrate(_ db: Database) throws {
        var seen = Set<String>()
        for step in steps where !seen.insert(step.name).inserted {
            throw ActiveObjectError.duplicateMigration(name: step.name)
        }
        try db.withAccess(.write) { access in
            let connection = access.connection
            try Self.createBookkeeping(connection)
            let applied = Set(try appliedMigrations(db))
            for step in steps where !applied.contains(step.name) {
                do {
                    try ForeignKeys.disabled(in: connection) {
                        try db.transaction {
                            try step.body(db)
                            try ForeignKeys.check(connection)
                            try connection.execute(
                                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                                [.text(step.name), try DateStrategy.iso8601Text.encode(Date())])
                        }
                    }
                } catch {
                    throw ActiveObjectError.migrationFailed(name: step.name, underlying: error)
                }
            }
        }
    }

    /// The names of the steps already applied to `db`, in the order they ran.
    /// - Throws: ``DatabaseError`` from SQLite (the bookkeeping table is created if missing);
    ///   ``ActiveObjectError/databaseClosed``.
    public func appliedMigrations(_ db: Database) throws -> [String] {
        try db.withAccess(.write) { access in
            let connection = access.connection
            try Self.createBookkeeping(connection)
            return try connection.rows("SELECT name FROM schema_migrations ORDER BY rowid").map { try $0["name"] }
        }
    }

    private static func createBookkeeping(_ connection: Connection) throws {
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY NOT NULL, applied_at TEXT NOT NULL)")
    }
}

/// Foreign-key enforcement around schema changes (https://www.sqlite.org/lang_altertable.html).
enum ForeignKeys {
    /// Runs `body` with enforcement off, then restores the state it found (also when `body`
    /// throws). Works inside a transaction too (``Connection/withoutForeignKeyEnforcement(_:)``),
    /// where `PRAGMA foreign_keys = OFF` would be a no-op.
    /// - Throws: what `body` throws; ``DatabaseError`` when the setting cannot be changed.
    static func disabled<T>(in connection: Connection, _ body: () throws -> T) throws -> T {
        try connection.withoutForeignKeyEnforcement(body)
    }

    /// Throws when any row of the database violates a foreign key.
    /// - Throws: ``DatabaseError`` (`constraint`) naming the first table at fault.
    static func check(_ connection: Connection) throws {
        try report(connection.rows("PRAGMA foreign_key_check"))
    }

    /// Throws when a row of one of `tables` violates one of its foreign keys.
    /// - Throws: ``DatabaseError`` (`constraint`) naming the first table at fault.
    static func check(_ connection: Connection, tables: [String]) throws {
        for table in tables {
            try report(connection.rows("PRAGMA foreign_key_check(\(SQLIdentifier.quote(table)))"))
        }
    }

    private static func report(_ violations: [Row]) throws {
        guard let first = violations.first else { return }
        let table: String = (try? first["table"]) ?? "?"
        let parent: String = (try? first["parent"]) ?? "?"
        throw DatabaseError(
            extendedResultCode: .constraint,
            message: "FOREIGN KEY check failed: \(violations.count) row(s) of \(table) reference missing rows of \(parent)")
    }
}
