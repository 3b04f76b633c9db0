extension ActiveRecord where Self: ActiveObject {
    /// ``migrate()``, and when `rebuildingTable` is true and the table no longer matches the
    /// model (a column the model dropped, a changed type or nullability, a foreign key ALTER
    /// cannot add), rebuilds the table preserving its rows. See ``migrate(in:rebuildingTable:)``.
    ///
    /// - Throws: ``ActiveObjectError/noDatabase(model:)`` when the model has no database, and
    ///   what ``migrate(in:rebuildingTable:)`` throws.
    public static func migrate(rebuildingTable: Bool) throws {
        let schema = try ModelSchema.of(self)
        guard let database = self.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        try migrate(in: database, rebuildingTable: rebuildingTable)
    }

    /// Migrates the model's table in `database`; with `rebuildingTable`, performs SQLite's
    /// documented table rebuild (<https://www.sqlite.org/lang_altertable.html#otheralter>) when
    /// the table differs from the model in a way `ALTER TABLE` cannot change — a column the
    /// model no longer declares, a different type or nullability, a foreign key to add or
    /// change, a different key, a `DEFAULT` frozen from a default computed at run time — all in
    /// one transaction (a savepoint inside the caller's):
    ///
    /// 1. read every row *through the model* as it will be copied, writing nothing: a value
    ///    that does not fit (NULL into a now non-optional column, text into a now integer
    ///    column) throws ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)``
    ///    and **nothing changes**;
    /// 2. create the new table under a temporary name, and copy every row with one
    ///    `INSERT … SELECT` (rowids kept; a new column gets its default, or for a default
    ///    computed at run time the value of a new object, which is not kept as `DEFAULT`; a
    ///    retyped column converts by the new column's affinity, and is read through the model
    ///    again); check that the new table holds as many rows as the old one;
    /// 3. drop the old table and rename the new one, with foreign-key enforcement off (so that
    ///    no `ON DELETE` action of a child table fires, inside the caller's transaction or a
    ///    ``Migrator`` step too) and `legacy_alter_table` on (so that the views and triggers
    ///    naming the table are left as they are);
    /// 4. recreate the old indexes (those whose columns still exist) and triggers, the old
    ///    table's `UNIQUE` constraints as unique indexes; rename the columns declared
    ///    `renamedFrom:`; create the model's declared indexes;
    /// 5. check that each view mentioning the table that worked before still works, and that
    ///    the table's triggers still compile (an `INSERT`, an `UPDATE` of every column and a
    ///    `DELETE` that fire them are prepared, never run), run `PRAGMA foreign_key_check` on
    ///    the table and the tables that reference it, then commit.
    ///
    /// No row is ever lost silently: the rebuild either copies every row or changes nothing.
    /// Columns the model no longer declares are dropped. When the table needs no rebuild, it
    /// does what ``createTable(in:)`` does. ``schemaPlan(in:rebuildingTable:)`` returns the
    /// statements it would execute.
    ///
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` when the class cannot be
    ///   mapped, or when the rebuild would break a view that mentions the table or one of the
    ///   table's triggers (the message names it);
    ///   ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)`` for a row
    ///   the model cannot read; ``ActiveObjectError/invalidValue(table:column:reason:)`` for a
    ///   default that cannot be written; ``DatabaseError`` from SQLite (a failing
    ///   `foreign_key_check` is `constraint`). Nothing changes when it throws.
    public static func migrate(in database: Database, rebuildingTable: Bool) throws {
        try SchemaChange.apply(try ModelSchema.of(self), in: database, rebuildingTable: rebuildingTable)
    }
}
