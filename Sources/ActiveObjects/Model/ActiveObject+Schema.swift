import Foundation

extension ActiveRecord where Self: ActiveObject {
    /// Creates the model's table if it does not exist, then adds every declared column the
    /// table lacks, and the declared indexes and unique constraints. Idempotent.
    ///
    /// Non-optional columns are `NOT NULL DEFAULT <the property's default>`, so columns can be
    /// added to a populated table (key columns have no `DEFAULT`: each row names its own key).
    /// Columns the model no longer declares are left alone.
    ///
    /// ```swift
    /// try Person.createTable()
    /// ```
    ///
    /// - Throws: ``ActiveObjectError/noDatabase(model:)`` when the model has no database, and
    ///   what ``createTable(in:)`` throws.
    public static func createTable() throws {
        let schema = try ModelSchema.of(self)
        guard let database = self.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        try createTable(in: database)
    }

    /// ``createTable()`` in the given database (for use inside a migration step).
    ///
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` when the class cannot be
    ///   mapped, or when a new non-optional foreign-key column cannot be added to the rows
    ///   the table holds (SQLite refuses a `REFERENCES` column with a non-NULL default while
    ///   foreign keys are enforced; the message names the remedies: an optional column, or
    ///   ``migrate(in:rebuildingTable:)``); ``ActiveObjectError/invalidValue(table:column:reason:)`` when a property's
    ///   default cannot be written as the column's `DEFAULT` (NaN, a date text strategies
    ///   cannot write, text containing NUL in a UTF-16 database); ``DatabaseError`` from
    ///   SQLite (nothing is changed: it all runs in one transaction).
    ///
    /// For an ``ActiveObject/isSynchronized`` model it also installs (or brings up to date)
    /// the triggers that record the table's changes for a ``SyncEngine``, and writes the pulled
    /// values that waited for the columns it adds; it throws
    /// ``ActiveObjectError/invalidModel(model:reason:)`` when such a model has no single UUID
    /// or String key.
    public static func createTable(in database: Database) throws {
        let schema = try ModelSchema.of(self)
        if schema.modelType.isSynchronized { _ = try SyncCapture.keyColumn(of: schema) }
        try database.transaction {
            try database.withAccess(.write) { access in
                let connection = access.connection
                let encoding = try SQLLiteral.TextEncoding(connection)
                let ddl = try SchemaDDL(schema: schema, context: schema.context(in: database), textEncoding: encoding)
                let existing = try connection.rows("PRAGMA table_info(\(schema.quotedTable))")
                if existing.isEmpty {
                    try connection.execute(ddl.createTableSQL)
                } else {
                    let names = Set(try existing.map { (try $0["name"] as String).lowercased() })
                    for (index, column) in schema.columns.enumerated() where !names.contains(column.name.lowercased()) {
                        do {
                            try connection.execute("ALTER TABLE \(schema.quotedTable) ADD COLUMN \(ddl.columnDefinitions[index])")
                        } catch let error as DatabaseError
                                    where column.options.references != nil && error.message.contains("REFERENCES column with non-NULL default") {
                            // SQLite refuses a REFERENCES column with a non-NULL default for a
                            // populated table while foreign keys are enforced: say what to do.
                            throw ActiveObjectError.invalidModel(
                                model: schema.modelName,
                                reason: "the foreign-key column \"\(column.name)\" cannot be added to the existing rows of "
                                    + "\(schema.tableName) (\(error.message)): declare it optional with a nil default, "
                                    + "or call migrate(rebuildingTable: true), which rebuilds the table with it")
                        }
                    }
                }
                for statement in ddl.indexSQL { try connection.execute(statement) }
                if schema.modelType.isSynchronized { try SyncCapture.install(schema, on: connection) }
            }
        }
    }

    /// The same as ``createTable()``, under ormapper's name.
    /// - Throws: what ``createTable()`` throws.
    public static func migrate() throws { try createTable() }

    /// The same as ``createTable(in:)``, under ormapper's name.
    /// - Throws: what ``createTable(in:)`` throws.
    public static func migrate(in database: Database) throws { try createTable(in: database) }
}
