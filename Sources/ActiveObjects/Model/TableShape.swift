/// What a table looks like now, read from SQLite's pragmas and `sqlite_master` (reads only).
struct TableShape {
    struct ColumnInfo {
        let name: String
        let type: String
        let notNull: Bool
        let isPrimaryKey: Bool
        /// The `DEFAULT` expression as written in the table's SQL (`'x'`, `0`, `NULL`), or nil.
        let defaultSQL: String?

        /// Whether the column has a `DEFAULT` other than NULL.
        var hasDefault: Bool { defaultSQL.map { $0.uppercased() != "NULL" } ?? false }

        /// Whether the column has a literal `DEFAULT` other than NULL (`'x'`, `-1`, `X'00'`,
        /// `TRUE`): one value for every row, frozen when the table was created.
        var hasFrozenDefault: Bool { hasDefault && expressionDefault == nil }

        /// The column's `DEFAULT` when it is an expression SQLite evaluates for each insert
        /// (`CURRENT_TIMESTAMP`, `(datetime('now'))`, any parenthesized expression), written
        /// so that it can follow `DEFAULT` in a column definition; nil for a literal or none.
        var expressionDefault: String? {
            guard let written = defaultSQL else { return nil }
            let sql = String(written.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
            guard !sql.isEmpty else { return nil }
            if Self.isLiteral(sql) { return nil }
            switch sql.uppercased() {
            case "CURRENT_TIMESTAMP", "CURRENT_DATE", "CURRENT_TIME": return sql
            default: return sql.hasPrefix("(") ? sql : "(\(sql))"
            }
        }

        /// A literal as `PRAGMA table_info` reports a `DEFAULT`: a string, blob, number
        /// (signed), NULL, TRUE or FALSE (and SQLite's double-quoted string fallback).
        private static func isLiteral(_ sql: String) -> Bool {
            var text = Substring(sql)
            if text.hasPrefix("'") || text.hasPrefix("\"") { return true }
            let upper = text.uppercased()
            if ["NULL", "TRUE", "FALSE"].contains(upper) { return true }
            if upper.hasPrefix("X'") { return true }
            while let first = text.first, first == "+" || first == "-" { text = text.dropFirst() }
            guard let first = text.first, first.isNumber || first == "." else { return false }
            // 12, 1.5, 1e3, 0x1F: nothing but a number's characters.
            return text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." || $0 == "+" || $0 == "-" }
        }
    }
    struct SchemaObject {
        let type: String
        let name: String
        let sql: String
        /// Columns an index covers (empty for triggers, which are always recreated).
        let columns: [String]
    }

    /// The table's name as the file spells it (nil when there is no such table).
    let storedName: String?
    let columns: [ColumnInfo]
    /// (from column, parent table, on delete, on update) for each foreign key.
    let foreignKeys: [(from: String, table: String, onDelete: String, onUpdate: String)]
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
    /// Whether the primary key is one column that is the rowid's alias (`INTEGER PRIMARY KEY`):
    /// false for `id INT PRIMARY KEY` and the like, a real column with its own values, which
    /// SQLite backs by an automatic index.
    let keyIsRowIDAlias: Bool

    /// - Throws: ``DatabaseError`` from SQLite.
    init(_ connection: Connection, table: String) throws {
        let quoted = SQLIdentifier.quote(table)
        let info = try connection.rows("PRAGMA table_info(\(quoted))")
        columns = try info.map { row in
            ColumnInfo(name: try row["name"], type: (try row["type"] as String).uppercased(),
                       notNull: try row["notnull"] as Int != 0, isPrimaryKey: try row["pk"] as Int != 0,
                       defaultSQL: try row["dflt_value"])
        }
        keyColumns = try info.compactMap { row -> (Int, String)? in
            let position: Int = try row["pk"]
            return position > 0 ? (position, try row["name"]) : nil
        }.sorted { $0.0 < $1.0 }.map(\.1)
        let layout = try connection.rows("SELECT wr FROM pragma_table_list WHERE name = ? AND schema = 'main'", [.text(table)])
        hasRowID = try layout.first.map { try $0["wr"] as Int == 0 } ?? true
        foreignKeys = try connection.rows("PRAGMA foreign_key_list(\(quoted))").map { row in
            (from: try row["from"], table: try row["table"], onDelete: (try row["on_delete"] as String).uppercased(),
             onUpdate: (try row["on_update"] as String).uppercased())
        }
        indexesAndTriggers = try connection.rows(
            "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ? COLLATE NOCASE AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY rowid",
            [.text(table)]
        ).map { row in
            let type: String = try row["type"]
            let name: String = try row["name"]
            let columns: [String] = type == "index"
                ? try connection.rows("PRAGMA index_info(\(SQLIdentifier.quote(name)))").compactMap { try $0["name"] as String? }
                : []
            return SchemaObject(type: type, name: name, sql: try row["sql"], columns: columns)
        }
        let tableRow = try connection.rows(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", [.text(table)]).first
        storedName = try tableRow?["name"]
        let tableSQL: String? = try tableRow?["sql"]
        isAutoIncrement = tableSQL?.uppercased().contains("AUTOINCREMENT") ?? false
        let indexList = try connection.rows("PRAGMA index_list(\(quoted))")
        let keyHasIndex = try indexList.contains { try $0["origin"] as String == "pk" }
        keyIsRowIDAlias = hasRowID && keyColumns.count == 1 && !keyHasIndex
        uniqueConstraints = try indexList.compactMap { row in
            guard try row["origin"] as String == "u" else { return nil }
            let name: String = try row["name"]
            return try connection.rows("PRAGMA index_info(\(SQLIdentifier.quote(name)))").map { try $0["name"] as String }
        }
    }

    /// The column named `name` (SQLite compares column names case-insensitively).
    func column(named name: String) -> ColumnInfo? {
        let folded = name.lowercased()
        return columns.first { $0.name.lowercased() == folded }
    }

    /// The table's column for each slot of `schema` that has one under its own name, or,
    /// for a column declared `renamedFrom:` whose own name the table lacks, under its old name.
    /// Nil for a column the table lacks.
    func matches(for schema: ModelSchema) -> [ColumnInfo?] {
        schema.columns.map { column in
            if let own = self.column(named: column.name) { return own }
            return column.options.renamedFrom.flatMap { self.column(named: $0) }
        }
    }

    /// True when ALTER TABLE cannot bring the table to the model: a column the model no longer
    /// declares, a different declared type or nullability, a foreign key to add or change, a
    /// different primary key, `WITHOUT ROWID` declared and missing (a foreign key's `ON UPDATE`
    /// alone is no difference: the model cannot declare one, and a rebuild keeps it); a column whose default is
    /// computed at run time (`runtimeDefaults`, by slot) that has a frozen (literal) `DEFAULT`, or that
    /// is missing and `NOT NULL` (`ADD COLUMN` refuses `NOT NULL` without a default).
    ///
    /// `defaults` are the columns' encoded defaults, by slot, when `ALTER TABLE ADD COLUMN`
    /// would refuse a foreign-key column with a non-NULL default (foreign keys enforced, rows
    /// in the table), else empty: such a missing column is then added by the rebuild.
    /// Columns declared `renamedFrom:` are compared under their old name when the table has
    /// only that one (a rename, not a change).
    func needsRebuild(for schema: ModelSchema, dateStrategy: DateStrategy, defaults: [DatabaseValue],
                      runtimeDefaults: Set<Int>) -> Bool {
        let matched = matches(for: schema)
        let expectedKey: [String]
        switch schema.key {
        case .rowID(let column, let isHidden): expectedKey = isHidden ? [] : [column]
        case .columns(let slots): expectedKey = slots.map { matched[$0]?.name ?? schema.columns[$0].name }
        }
        if expectedKey.map({ $0.lowercased() }) != keyColumns.map({ $0.lowercased() }) { return true }
        if schema.declaresWithoutRowID && hasRowID { return true }
        if case .rowID = schema.key, !hasRowID { return true }
        let modelNames = Set(matched.compactMap { $0?.name.lowercased() } + schema.columns.map { $0.name.lowercased() }
                             + [schema.primaryKey.lowercased()])
        if columns.contains(where: { !modelNames.contains($0.name.lowercased()) }) { return true }
        let keySlots = Set(schema.keySlots)
        for (slot, column) in schema.columns.enumerated() {
            guard let current = matched[slot] else {
                // ADD COLUMN handles it, unless it is a foreign key with a non-NULL default, or
                // NOT NULL without a default.
                if column.options.references != nil, slot < defaults.count, defaults[slot] != .null { return true }
                if runtimeDefaults.contains(slot) && !column.isNullable && !keySlots.contains(slot) { return true }
                continue
            }
            if current.type != column.columnType(dateStrategy: dateStrategy).rawValue { return true }
            if current.notNull != !column.isNullable { return true }
            // Only a literal DEFAULT is frozen: an expression (CURRENT_TIMESTAMP) is computed
            // for each insert, and a rebuild keeps it (see SchemaPlanner.keptDefaults).
            if runtimeDefaults.contains(slot) && current.hasFrozenDefault { return true }
            let declared = column.options.references.map { ($0.tableName.lowercased(), column.options.onDelete.rawValue) }
            let actual = foreignKeys.first { $0.from.lowercased() == current.name.lowercased() }
                .map { ($0.table.lowercased(), $0.onDelete) }
            if declared?.0 != actual?.0 || declared?.1 != actual?.1 { return true }
        }
        return false
    }
}
