import Foundation

extension ActiveRecord where Self: ActiveObject {
    /// Creates the model's table if it does not exist, then renames the columns declared
    /// `renamedFrom:`, adds every declared column the table lacks, and creates the declared
    /// indexes and unique constraints. Idempotent: once the table is up to date it runs nothing
    /// (``schemaPlan()`` is then empty).
    ///
    /// Non-optional columns are `NOT NULL DEFAULT <the property's default>`, so columns can be
    /// added to a populated table. Key columns have no `DEFAULT` (each row names its own key),
    /// and neither has a column whose default is computed at run time (`= Date()`, `= UUID()`):
    /// the moment the table was created is no default for rows inserted later. Such a column,
    /// when non-optional, cannot be added by `ALTER TABLE`: `createTable()` then rebuilds the
    /// table as ``migrate(rebuildingTable:)`` does, giving the rows already there the value the
    /// property has in a new object, and keeps it as no `DEFAULT`. A table created by an
    /// earlier version with such a value frozen as its `DEFAULT` keeps it until
    /// `migrate(rebuildingTable: true)` rebuilds it (createTable() does not rebuild a table for
    /// a default alone).
    ///
    /// `@Column(renamedFrom: "old")`: when the table has a column `old` and none of the new
    /// name, `ALTER TABLE … RENAME COLUMN` keeps every value (and SQLite rewrites the indexes,
    /// triggers and views that name it; it refuses when a view or trigger of the file is
    /// broken). When the table has both, nothing is renamed: the model uses the new column and
    /// the old one is left alone, like any column the model no longer declares.
    ///
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
    /// It executes exactly the statements ``schemaPlan(in:)`` returns, in one transaction (a
    /// savepoint inside the caller's).
    ///
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` when the class cannot be
    ///   mapped; when a new non-optional foreign-key column cannot be added to the rows the
    ///   table holds (SQLite refuses a `REFERENCES` column with a non-NULL default while
    ///   foreign keys are enforced; the message names the remedies: an optional column, or
    ///   ``migrate(in:rebuildingTable:)``); or when a non-optional column with a run-time
    ///   default must be added to a table that holds columns the model no longer declares (the
    ///   rebuild it needs would drop them: the message names the remedies).
    ///   ``ActiveObjectError/invalidValue(table:column:reason:)`` when a property's default
    ///   cannot be written as the column's `DEFAULT` (NaN, a date text strategies cannot write,
    ///   text containing NUL in a UTF-16 database). When it rebuilds the table, what
    ///   ``migrate(in:rebuildingTable:)`` throws. ``DatabaseError`` from SQLite. Nothing is
    ///   changed when it throws: it all runs in one transaction.
    ///
    /// For an ``ActiveObject/isSynchronized`` model it also installs (or brings up to date)
    /// the triggers that record the table's changes for a ``SyncEngine``, renames renamed
    /// columns in the synchronization bookkeeping, and writes the pulled values that waited for
    /// the columns it adds; it throws ``ActiveObjectError/invalidModel(model:reason:)`` when
    /// such a model has no single UUID or String key.
    public static func createTable(in database: Database) throws {
        try SchemaChange.apply(try ModelSchema.of(self), in: database, rebuildingTable: false)
    }

    /// The same as ``createTable()``, under ormapper's name.
    /// - Throws: what ``createTable()`` throws.
    public static func migrate() throws { try createTable() }

    /// The same as ``createTable(in:)``, under ormapper's name.
    /// - Throws: what ``createTable(in:)`` throws.
    public static func migrate(in database: Database) throws { try createTable(in: database) }

    /// The SQL statements ``createTable()`` would execute now, in order, without running any:
    /// empty when the table is up to date.
    ///
    /// ```swift
    /// for statement in try Post.schemaPlan() { print(statement) }
    /// // ALTER TABLE "post" RENAME COLUMN "headline" TO "subtitle"
    /// ```
    ///
    /// The plan is what `createTable()` computes before it executes: the statements it then
    /// runs are exactly these (values written as SQL literals, nothing bound), in one
    /// transaction, as long as nothing else changes the file in between. Not listed, because
    /// they only read: the `PRAGMA`s and `sqlite_master` reads that make the plan, and a
    /// rebuild's checks. Not listed either, for a synchronized model: the pulled values that
    /// waited for a column the plan adds, which `createTable()` writes after the plan (data,
    /// with bound values); the plan does list the bookkeeping tables, triggers and renames.
    ///
    /// - Throws: ``ActiveObjectError/noDatabase(model:)`` when the model has no database, and
    ///   what ``schemaPlan(in:)`` throws.
    public static func schemaPlan() throws -> [String] {
        try schemaPlan(rebuildingTable: false)
    }

    /// ``schemaPlan()`` in the given database.
    ///
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` and
    ///   ``ActiveObjectError/invalidValue(table:column:reason:)`` in the cases where
    ///   ``createTable(in:)`` throws them before running anything (a class that cannot be
    ///   mapped, a column that cannot be added, a default that cannot be written);
    ///   ``ActiveObjectError/databaseClosed``; ``DatabaseError`` from SQLite's reads.
    public static func schemaPlan(in database: Database) throws -> [String] {
        try schemaPlan(in: database, rebuildingTable: false)
    }

    /// The SQL statements ``migrate(rebuildingTable:)`` would execute now, without running
    /// any: with `rebuildingTable` false the same as ``schemaPlan()``; with true, the rebuild
    /// when the table differs from the model in a way `ALTER TABLE` cannot change (see
    /// ``migrate(in:rebuildingTable:)``). Empty when the table is up to date.
    ///
    /// - Throws: ``ActiveObjectError/noDatabase(model:)`` when the model has no database, and
    ///   what ``schemaPlan(in:rebuildingTable:)`` throws.
    public static func schemaPlan(rebuildingTable: Bool) throws -> [String] {
        let schema = try ModelSchema.of(self)
        guard let database = self.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        return try schemaPlan(in: database, rebuildingTable: rebuildingTable)
    }

    /// ``schemaPlan(rebuildingTable:)`` in the given database.
    ///
    /// - Throws: what ``schemaPlan(in:)`` throws.
    public static func schemaPlan(in database: Database, rebuildingTable: Bool) throws -> [String] {
        try SchemaChange.plan(of: try ModelSchema.of(self), in: database, rebuildingTable: rebuildingTable).statements
    }
}
