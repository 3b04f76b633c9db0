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
    /// the table differs from the model, all in one transaction:
    ///
    /// 1. create the new table under a temporary name;
    /// 2. copy every row *through the model*: each row is read as the model reads it, so a
    ///    value that does not fit (NULL into a now non-optional column, text into a now
    ///    integer column) throws ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)``
    ///    and **nothing changes**; columns the model no longer declares are dropped;
    /// 3. drop the old table, rename the new one;
    /// 4. recreate the old indexes and triggers (those whose columns still exist), the old
    ///    table's `UNIQUE` constraints as unique indexes, and the model's declared indexes;
    /// 5. `PRAGMA foreign_key_check`, then commit.
    ///
    /// No row is ever lost silently: the rebuild either copies every row or changes nothing.
    ///
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` when the class cannot be
    ///   mapped; ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)`` for a row
    ///   the model cannot read; ``ActiveObjectError/invalidValue(table:column:reason:)`` for a
    ///   default that cannot be written; ``DatabaseError`` from SQLite (a failing
    ///   `foreign_key_check` is `constraint`). Nothing changes when it throws.
    public static func migrate(in database: Database, rebuildingTable: Bool) throws {
        guard rebuildingTable else { return try createTable(in: database) }
        let schema = try ModelSchema.of(self)
        let context = schema.context(in: database)
        try database.withAccess(.write) { access in
            let connection = access.connection
            let shape = try TableShape(connection, table: schema.tableName)
            // ALTER TABLE refuses a foreign-key column with a non-NULL default only while
            // foreign keys are enforced and the table holds rows: the rebuild adds it then.
            let alterRefusesForeignKeyDefaults = try !shape.columns.isEmpty
                && schema.columns.contains(where: { $0.options.references != nil })
                && connection.scalarValue("PRAGMA foreign_keys") == .integer(1)
                && connection.scalarValue("SELECT EXISTS (SELECT 1 FROM \(schema.quotedTable))") == .integer(1)
            guard !shape.columns.isEmpty,
                  shape.needsRebuild(for: schema, dateStrategy: context.dateStrategy,
                                     defaults: alterRefusesForeignKeyDefaults
                                         ? try schema.defaultValues(context: context) : []) else {
                return try createTable(in: database)
            }
            try ForeignKeys.disabled(in: connection) {
                try database.transaction {
                    try rebuild(schema: schema, shape: shape, context: context, connection: connection)
                }
            }
            // The table may have gained or lost its rowid: models that did not declare its
            // layout learn it again.
            database.forgetTableLayouts()
        }
    }

    private static func rebuild(schema: ModelSchema, shape: TableShape, context: ValueContext, connection: Connection) throws {
        let temporary = "_activeobjects_rebuild_\(schema.tableName)"
        let ddl = try SchemaDDL(schema: schema, context: context, textEncoding: SQLLiteral.TextEncoding(connection),
                                tableName: temporary, autoIncrement: shape.isAutoIncrement)
        try connection.execute("DROP TABLE IF EXISTS \(SQLIdentifier.quote(temporary))")
        try connection.execute(ddl.createTableSQL)

        // Copy through the model, so that only rows the model can read are kept — or none.
        // Rowids are carried over whenever both tables have them.
        let keepsRowIDs = shape.hasRowID && !schema.declaresWithoutRowID
        let idColumn: String? = keepsRowIDs ? (schema.keySlots.isEmpty ? schema.quotedPrimaryKey : "\"rowid\"") : nil
        let names = (idColumn.map { [$0] } ?? []) + schema.columns.map(\.quotedName)
        let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
        let insert = "INSERT INTO \(SQLIdentifier.quote(temporary)) (\(names.joined(separator: ", "))) VALUES (\(marks))"
        let reader = try connection.prepare("SELECT \(shape.hasRowID ? "rowid, " : "")* FROM \(schema.quotedTable)")
        defer { reader.finalize() }
        let loader = ObjectLoader(schema: schema, statement: reader, context: context)
        while try reader.step() {
            let object = try loader.load(from: reader)
            let values = try object.encodedValues(schema: schema, context: context)
            let id: [DatabaseValue] = idColumn == nil ? [] : [object.id.map { .integer($0) } ?? .null]
            try connection.execute(insert, id + values)
        }

        // AUTOINCREMENT's high-water mark may be above the largest id left: carry it over.
        let sequence = shape.isAutoIncrement
            ? try connection.scalarValue("SELECT seq FROM sqlite_sequence WHERE name = ?", [.text(schema.tableName)])
            : nil
        try connection.execute("DROP TABLE \(schema.quotedTable)")
        try connection.execute("ALTER TABLE \(SQLIdentifier.quote(temporary)) RENAME TO \(schema.quotedTable)")
        if case .integer(let highest)? = sequence {
            try connection.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?",
                                   [.integer(highest), .text(schema.tableName)])
        }
        let kept = Set(schema.columns.map { $0.name.lowercased() } + [schema.primaryKey.lowercased()])
        for object in shape.indexesAndTriggers where object.columns.allSatisfy({ kept.contains($0.lowercased()) }) {
            try connection.execute(object.sql)
        }
        // UNIQUE constraints of the old table live on as unique indexes.
        for columns in shape.uniqueConstraints where columns.allSatisfy({ kept.contains($0.lowercased()) }) {
            let name = SQLIdentifier.quote(([schema.tableName] + columns + ["unique"]).joined(separator: "_"))
            let list = columns.map(SQLIdentifier.quote).joined(separator: ", ")
            try connection.execute("CREATE UNIQUE INDEX IF NOT EXISTS \(name) ON \(schema.quotedTable)(\(list))")
        }
        for statement in ddl.indexSQL { try connection.execute(statement) }
        // The synchronization triggers recreated above name the old columns: bring them up to date.
        if schema.modelType.isSynchronized { try SyncCapture.install(schema, on: connection) }
        try ForeignKeys.check(connection)
    }
}

/// What a table looks like now, read from SQLite's pragmas.
struct TableShape {
    struct ColumnInfo {
        let name: String
        let type: String
        let notNull: Bool
        let isPrimaryKey: Bool
    }
    struct SchemaObject {
        let sql: String
        /// Columns an index covers (empty for triggers, which are always recreated).
        let columns: [String]
    }

    let columns: [ColumnInfo]
    /// (from column, parent table, on delete) for each foreign key.
    let foreignKeys: [(from: String, table: String, onDelete: String)]
    let indexesAndTriggers: [SchemaObject]
    /// The columns of each `UNIQUE` table constraint (automatic indexes, which have no SQL).
    let uniqueConstraints: [[String]]
    /// Whether the primary key is `AUTOINCREMENT` (ids of deleted rows never reused); a
    /// rebuild keeps that promise.
    let isAutoIncrement: Bool
    /// The primary key's columns, in key order (empty without a declared key).
    let keyColumns: [String]
    /// False for a `WITHOUT ROWID` table.
    let hasRowID: Bool

    init(_ connection: Connection, table: String) throws {
        let quoted = SQLIdentifier.quote(table)
        let info = try connection.rows("PRAGMA table_info(\(quoted))")
        columns = try info.map { row in
            ColumnInfo(name: try row["name"], type: (try row["type"] as String).uppercased(),
                       notNull: try row["notnull"] as Int != 0, isPrimaryKey: try row["pk"] as Int != 0)
        }
        keyColumns = try info.compactMap { row -> (Int, String)? in
            let position: Int = try row["pk"]
            return position > 0 ? (position, try row["name"]) : nil
        }.sorted { $0.0 < $1.0 }.map(\.1)
        let layout = try connection.rows("SELECT wr FROM pragma_table_list WHERE name = ? AND schema = 'main'", [.text(table)])
        hasRowID = try layout.first.map { try $0["wr"] as Int == 0 } ?? true
        foreignKeys = try connection.rows("PRAGMA foreign_key_list(\(quoted))").map { row in
            (from: try row["from"], table: try row["table"], onDelete: (try row["on_delete"] as String).uppercased())
        }
        indexesAndTriggers = try connection.rows(
            "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL",
            [.text(table)]
        ).map { row in
            let type: String = try row["type"]
            let name: String = try row["name"]
            let columns: [String] = type == "index"
                ? try connection.rows("PRAGMA index_info(\(SQLIdentifier.quote(name)))").compactMap { try $0["name"] as String? }
                : []
            return SchemaObject(sql: try row["sql"], columns: columns)
        }
        let tableSQL: String? = try connection.rows(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(table)]).first?["sql"]
        isAutoIncrement = tableSQL?.uppercased().contains("AUTOINCREMENT") ?? false
        uniqueConstraints = try connection.rows("PRAGMA index_list(\(quoted))").compactMap { row in
            guard try row["origin"] as String == "u" else { return nil }
            let name: String = try row["name"]
            return try connection.rows("PRAGMA index_info(\(SQLIdentifier.quote(name)))").map { try $0["name"] as String }
        }
    }

    /// True when ALTER TABLE cannot bring the table to the model: a column the model no longer
    /// declares, a different declared type or nullability, a foreign key to add or change, a
    /// different primary key, or `WITHOUT ROWID` declared and missing.
    ///
    /// `defaults` are the columns' encoded defaults, by slot, when `ALTER TABLE ADD COLUMN`
    /// would refuse a foreign-key column with a non-NULL default (foreign keys enforced, rows
    /// in the table), else empty: such a missing column is then added by the rebuild.
    func needsRebuild(for schema: ModelSchema, dateStrategy: DateStrategy, defaults: [DatabaseValue]) -> Bool {
        let expectedKey: [String]
        switch schema.key {
        case .rowID(let column, let isHidden): expectedKey = isHidden ? [] : [column]
        case .columns(let slots): expectedKey = slots.map { schema.columns[$0].name }
        }
        if expectedKey.map({ $0.lowercased() }) != keyColumns.map({ $0.lowercased() }) { return true }
        if schema.declaresWithoutRowID && hasRowID { return true }
        if case .rowID = schema.key, !hasRowID { return true }
        var existing: [String: ColumnInfo] = [:]
        for column in columns { existing[column.name.lowercased()] = column }
        let modelNames = Set(schema.columns.map { $0.name.lowercased() } + [schema.primaryKey.lowercased()])
        if columns.contains(where: { !modelNames.contains($0.name.lowercased()) }) { return true }
        for (slot, column) in schema.columns.enumerated() {
            guard let current = existing[column.name.lowercased()] else {
                // ADD COLUMN handles it, unless it is a foreign key with a non-NULL default.
                if column.options.references != nil, slot < defaults.count, defaults[slot] != .null { return true }
                continue
            }
            if current.type != column.columnType(dateStrategy: dateStrategy).rawValue { return true }
            if current.notNull != !column.isNullable { return true }
            let declared = column.options.references.map { ($0.tableName.lowercased(), column.options.onDelete.rawValue) }
            let actual = foreignKeys.first { $0.from.lowercased() == column.name.lowercased() }
                .map { ($0.table.lowercased(), $0.onDelete) }
            if declared?.0 != actual?.0 || declared?.1 != actual?.1 { return true }
        }
        return false
    }
}
