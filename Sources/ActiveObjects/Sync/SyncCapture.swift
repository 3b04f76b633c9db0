import Foundation

/// Change capture on a device: the bookkeeping tables, and the SQL triggers that record every
/// insert, update and delete of a synchronized table in the change log, in the same
/// transaction as the change — whoever writes (models, raw SQL, another `Database`, another
/// process, the `sqlite3` shell).
///
/// A trigger only appends one row to `activeobjects_sync_log` (the table, the key, the kind of
/// change, the moment, and for updates the changed columns); the clock stamps are worked out
/// later, when the log is folded (``SyncLedger/fold(_:)``), in the order of the log. Apply
/// and push run inside the library; the triggers are all that runs on every write.
enum SyncCapture {
    static let logTable = "activeobjects_sync_log"
    static let fieldsTable = "activeobjects_sync_fields"
    static let stateTable = "activeobjects_sync_state"
    static let inboxTable = "activeobjects_sync_inbox"

    /// Kinds of log entries.
    enum Kind: Int64 {
        case insert = 0, update = 1, delete = 2
        /// Not a change: the clock moves up to `stamp` (written after applying pulled rows).
        case clock = 3
        /// Not a change: the row is pushed again as it is (for a new hub). Written folded.
        case resend = 4
    }

    /// Separates column names in an update's entry (names never contain it).
    static let columnSeparator: Character = "\u{1F}"

    /// The bookkeeping tables, created when missing.
    static let bookkeepingSQL = [
        """
        CREATE TABLE IF NOT EXISTS \(logTable) (
            seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, pk, kind INTEGER NOT NULL, t REAL, cols TEXT, stamp INTEGER)
        """,
        """
        CREATE TABLE IF NOT EXISTS \(fieldsTable) (
            tbl TEXT NOT NULL, pk NOT NULL, col TEXT NOT NULL, hlc INTEGER NOT NULL, node INTEGER NOT NULL,
            parked INTEGER NOT NULL DEFAULT 0, value,
            PRIMARY KEY (tbl, pk, col)) WITHOUT ROWID
        """,
        // Rows with values waiting in the fields table: few, found at every apply.
        "CREATE INDEX IF NOT EXISTS activeobjects_sync_fields_parked ON \(fieldsTable) (tbl, pk) WHERE parked = 1",
        "CREATE TABLE IF NOT EXISTS \(stateTable) (name TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID",
        // Numbers never reused: a synchronize() keeps the replies it stored by number.
        "CREATE TABLE IF NOT EXISTS \(inboxTable) (batch INTEGER PRIMARY KEY AUTOINCREMENT, reply BLOB NOT NULL)",
    ]

    /// The single key column of a synchronized model, checked: a declared `UUID` or `String`
    /// (TEXT) column, so that every device can create rows without coordinating.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)``.
    static func keyColumn(of schema: ModelSchema) throws -> SchemaColumn {
        guard schema.modelType.isSynchronized else {
            throw ActiveObjectError.invalidModel(
                model: schema.modelName,
                reason: "it is not synchronized: override class var isSynchronized to return true")
        }
        guard case .columns(let slots) = schema.key, slots.count == 1 else {
            throw ActiveObjectError.invalidModel(
                model: schema.modelName,
                reason: "a synchronized model needs a single UUID or String primary key column (override primaryKey to name a declared @Column, e.g. `@Column var uuid = UUID()`), not an integer id: devices create rows without asking each other for numbers")
        }
        let column = schema.columns[slots[0]]
        guard column.accessor.columnType == .text, !column.accessor.isDate else {
            throw ActiveObjectError.invalidModel(
                model: schema.modelName,
                reason: "the primary key \"\(column.name)\" of a synchronized model must be a UUID or String column, not \(column.accessor.columnType.rawValue)")
        }
        return column
    }

    /// The names of the bookkeeping objects, in the order of ``bookkeepingSQL``.
    static let bookkeepingNames = [logTable, fieldsTable, "activeobjects_sync_fields_parked", stateTable, inboxTable]

    /// Installs or refreshes the capture triggers of `schema`'s table on `connection` (inside a
    /// transaction the caller holds), creating the bookkeeping tables when missing; applies the
    /// pulled values that waited for columns the table now has. A table that had no triggers
    /// and already holds rows has each row recorded as inserted, so that it is pushed.
    /// Does nothing when the table does not exist.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` for a model that cannot be
    ///   synchronized; ``DatabaseError``.
    static func install(_ schema: ModelSchema, on connection: Connection) throws {
        let columns = try tableColumns(schema.tableName, on: connection)
        for statement in try installSQL(schema, columns: columns, on: connection) { try connection.execute(statement) }
        try applyParked(schema, on: connection)
    }

    /// The statements ``install(_:on:)`` runs before it writes parked values, read from the
    /// file as it is now (reads only): the bookkeeping tables missing; for each column renamed
    /// (`renamedColumns`, old and new name), the statements that rename it in the bookkeeping;
    /// the triggers, dropped and created again unless the file has them exactly; and, for a
    /// table that had no triggers and is not new, the statement that records its rows as
    /// inserted. Literal SQL only, so that ``ActiveRecord/schemaPlan()`` can show it.
    ///
    /// - Parameters:
    ///   - columns: the table's columns, in table order, as they will be when the triggers are
    ///     created (empty: the table does not exist, and only the bookkeeping is created).
    ///   - tableIsNew: the table is created by the same plan (nothing to record as inserted).
    ///   - triggersDropped: the plan drops the table first (a rebuild), and the triggers with it.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` for a model that cannot be
    ///   synchronized; ``DatabaseError``.
    static func installSQL(_ schema: ModelSchema, columns: [String], on connection: Connection,
                           tableIsNew: Bool = false, triggersDropped: Bool = false,
                           renamedColumns: [(old: String, new: String)] = []) throws -> [String] {
        let key = try keyColumn(of: schema)
        var statements: [String] = []
        func exists(_ name: String) throws -> Bool {
            try connection.scalarValue("SELECT 1 FROM sqlite_master WHERE name = ? COLLATE NOCASE", [.text(name)]) != nil
        }
        for (name, sql) in zip(bookkeepingNames, bookkeepingSQL) where try !exists(name) { statements.append(sql) }
        if try exists(fieldsTable) && exists(logTable) {
            for rename in renamedColumns {
                statements += renameSQL(table: schema.tableName, from: rename.old, to: rename.new)
            }
        }
        guard !columns.isEmpty else { return statements }
        let triggers = triggerSQL(table: schema.tableName, key: key.name, columns: columns)
        var hadTriggers = false
        var upToDate = true
        for (name, sql) in triggers {
            let existing = try connection.scalarValue(
                "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", [.text(name)])
            if case .text(let text)? = existing {
                hadTriggers = true
                if text != sql { upToDate = false }
            } else {
                upToDate = false
            }
        }
        if triggersDropped {
            statements += triggers.map(\.sql)
        } else if !upToDate {
            for (name, sql) in triggers {
                statements.append("DROP TRIGGER IF EXISTS \(SQLIdentifier.quote(name))")
                statements.append(sql)
            }
        }
        if !hadTriggers && !tableIsNew {
            // Rows written before the table was synchronized: push them as inserted now.
            statements.append(
                "INSERT INTO \(logTable) (tbl, pk, kind, t) SELECT \(literal(schema.tableName)), \(SQLIdentifier.quote(key.name)), 0, julianday('now') FROM \(schema.quotedTable)")
        }
        return statements
    }

    /// Writes the pulled values of `schema`'s table that waited for columns the table now has
    /// (parked values: data, written with bound values, after the schema statements). Does
    /// nothing when the table or the bookkeeping does not exist.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)``; ``DatabaseError``.
    static func applyParked(_ schema: ModelSchema, on connection: Connection) throws {
        let key = try keyColumn(of: schema)
        let columns = try tableColumns(schema.tableName, on: connection)
        guard !columns.isEmpty,
              try connection.scalarValue("SELECT 1 FROM sqlite_master WHERE name = ?", [.text(fieldsTable)]) != nil else { return }
        try SyncLedger(connection: connection).applyParked(table: schema.tableName, keyColumn: key.name, columns: columns)
    }

    /// The statements that rename column `old` of `table` to `new` in the bookkeeping: the
    /// fields recorded under the old name take the new one (where both exist for a row, the
    /// later stamp wins), and log entries not folded yet name the new column.
    static func renameSQL(table: String, from old: String, to new: String) -> [String] {
        let tableLiteral = literal(table)
        let oldLiteral = literal(old)
        let newLiteral = literal(new)
        let separator = "char(31)"   // columnSeparator, U+001F
        return [
            """
            DELETE FROM \(fieldsTable) WHERE tbl = \(tableLiteral) AND col = \(newLiteral) AND EXISTS (\
            SELECT 1 FROM \(fieldsTable) AS o WHERE o.tbl = \(fieldsTable).tbl AND o.pk = \(fieldsTable).pk \
            AND o.col = \(oldLiteral) COLLATE NOCASE AND (o.hlc, o.node) > (\(fieldsTable).hlc, \(fieldsTable).node))
            """,
            "UPDATE OR IGNORE \(fieldsTable) SET col = \(newLiteral) WHERE tbl = \(tableLiteral) AND col = \(oldLiteral) COLLATE NOCASE",
            "DELETE FROM \(fieldsTable) WHERE tbl = \(tableLiteral) AND col = \(oldLiteral) COLLATE NOCASE",
            """
            UPDATE \(logTable) SET cols = substr(replace(\(separator) || cols, \(separator) || \(oldLiteral) || \(separator), \
            \(separator) || \(newLiteral) || \(separator)), 2) WHERE tbl = \(tableLiteral) AND stamp IS NULL AND cols IS NOT NULL
            """,
        ]
    }

    /// The columns of `table` as the file has them now (empty when there is no such table).
    static func tableColumns(_ table: String, on connection: Connection, includingKey: Bool = true) throws -> [String] {
        try connection.rows("SELECT name FROM pragma_table_info(?)\(includingKey ? "" : " WHERE pk = 0")", [.text(table)]).map { row in
            guard case .text(let name) = row.values[0] else { return "" }
            return name
        }
    }

    /// The three triggers of a table, by name: each appends one entry to the log per row.
    /// An update that changes the key is recorded as a delete of the old key and an insert of
    /// the new one; one that changes nothing is not recorded.
    static func triggerSQL(table: String, key: String, columns: [String]) -> [(name: String, sql: String)] {
        let quotedTable = SQLIdentifier.quote(table)
        let tableLiteral = literal(table)
        let quotedKey = SQLIdentifier.quote(key)
        let log = "INSERT INTO \(logTable) (tbl, pk, kind, t"
        let others = columns.filter { $0.lowercased() != key.lowercased() }
        let changed = others.isEmpty ? "''" : others.map { column in
            let quoted = SQLIdentifier.quote(column)
            return "CASE WHEN OLD.\(quoted) IS NOT NEW.\(quoted) THEN \(literal(column + String(columnSeparator))) ELSE '' END"
        }.joined(separator: " || ")
        let prefix = "activeobjects_sync_" + table
        return [
            (prefix + "_insert", """
            CREATE TRIGGER \(SQLIdentifier.quote(prefix + "_insert")) AFTER INSERT ON \(quotedTable) BEGIN \
            \(log)) VALUES (\(tableLiteral), NEW.\(quotedKey), 0, julianday('now')); END
            """),
            (prefix + "_update", """
            CREATE TRIGGER \(SQLIdentifier.quote(prefix + "_update")) AFTER UPDATE ON \(quotedTable) BEGIN \
            \(log)) SELECT \(tableLiteral), OLD.\(quotedKey), 2, julianday('now') WHERE OLD.\(quotedKey) IS NOT NEW.\(quotedKey); \
            \(log)) SELECT \(tableLiteral), NEW.\(quotedKey), 0, julianday('now') WHERE OLD.\(quotedKey) IS NOT NEW.\(quotedKey); \
            \(log), cols) SELECT \(tableLiteral), NEW.\(quotedKey), 1, julianday('now'), c FROM (SELECT \(changed) AS c) \
            WHERE OLD.\(quotedKey) IS NEW.\(quotedKey) AND c <> ''; END
            """),
            (prefix + "_delete", """
            CREATE TRIGGER \(SQLIdentifier.quote(prefix + "_delete")) AFTER DELETE ON \(quotedTable) BEGIN \
            \(log)) VALUES (\(tableLiteral), OLD.\(quotedKey), 2, julianday('now')); END
            """),
        ]
    }

    /// A SQL string literal.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
