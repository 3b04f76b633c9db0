import Foundation

/// The full-text index of a model with ``ActiveObject/searchableColumns``: an external-content
/// FTS5 table `<table>_search` over those columns, and three SQL triggers on the table that keep
/// it in step with every write — the library's, raw SQL's, another process's — in the writer's
/// transaction. The index stores no text of its own: it reads the table's rows by rowid.
///
/// Its statements are part of the model's ``SchemaPlan`` (``installSteps(for:on:tableIsNew:tableRebuilt:)``),
/// so that `createTable()` creates, changes or drops the index in the same transaction as the
/// table, and `schemaPlan()` lists them.
enum SearchIndex {
    /// How text becomes words: Unicode letters and digits; case and diacritics folded (`É`
    /// finds `e`; a letter that folds to two, `ß`, is kept as it is).
    static let tokenizer = "unicode61 remove_diacritics 2"
    /// Prefix indexes for words of 2 and 3 characters, so that search as you type stays fast
    /// for short last words.
    static let prefixLengths = "2 3"

    /// The FTS5 table's name: `<table>_search`.
    static func indexName(of table: String) -> String { "\(table)_search" }

    /// The names of the three triggers: after insert, after delete, after update.
    static func triggerNames(of table: String) -> [String] {
        ["insert", "delete", "update"].map { "\(table)_search_\($0)" }
    }

    /// `CREATE VIRTUAL TABLE … USING fts5(…)` and the three `CREATE TRIGGER`s for `schema`.
    static func creationSQL(for schema: ModelSchema) throws -> (index: String, triggers: [String]) {
        let table = schema.tableName
        let index = SQLIdentifier.quote(indexName(of: table))
        let columns = schema.searchSlots.map { schema.columns[$0].quotedName }
        let list = columns.joined(separator: ", ")
        let indexSQL = "CREATE VIRTUAL TABLE \(index) USING fts5(\(list)\(try optionsSQL(of: table)))"
        let newValues = (["new.rowid"] + columns.map { "new.\($0)" }).joined(separator: ", ")
        let oldValues = (["'delete'", "old.rowid"] + columns.map { "old.\($0)" }).joined(separator: ", ")
        let insert = "INSERT INTO \(index)(rowid, \(list)) VALUES (\(newValues));"
        let delete = "INSERT INTO \(index)(\(index), rowid, \(list)) VALUES (\(oldValues));"
        // An UPDATE that changes none of the indexed values nor the rowid leaves the index
        // alone. (A `WHEN` on the values rather than `UPDATE OF <columns>`: `OF` matches the
        // names a SET clause writes, and `SET rowid = …` moves the row under any of its names.)
        let changed = (["old.rowid IS NOT new.rowid"] + columns.map { "old.\($0) IS NOT new.\($0)" })
            .joined(separator: " OR ")
        let names = triggerNames(of: table).map(SQLIdentifier.quote)
        let quotedTable = schema.quotedTable
        return (indexSQL, [
            "CREATE TRIGGER \(names[0]) AFTER INSERT ON \(quotedTable) BEGIN \(insert) END",
            "CREATE TRIGGER \(names[1]) AFTER DELETE ON \(quotedTable) BEGIN \(delete) END",
            "CREATE TRIGGER \(names[2]) AFTER UPDATE ON \(quotedTable) WHEN \(changed) BEGIN \(delete) \(insert) END",
        ])
    }

    /// The FTS5 options after the columns: `, content='t', tokenize='…', prefix='2 3'`. An
    /// index whose SQL ends with exactly these, for this table, is the library's.
    static func optionsSQL(of table: String) throws -> String {
        ", content=\(try SQLLiteral.render(.text(table))), tokenize='\(tokenizer)', prefix='\(prefixLengths)'"
    }

    /// Whether `sql` (from `sqlite_master`) is the library's index of `table`: one
    /// ``creationSQL(for:)`` writes, for some columns — not an FTS5 table the app made itself.
    static func isLibraryIndex(_ sql: String, of table: String) throws -> Bool {
        let head = "CREATE VIRTUAL TABLE \(SQLIdentifier.quote(indexName(of: table))) USING fts5("
        let tail = try optionsSQL(of: table) + ")"
        return sql.hasPrefix(head) && sql.hasSuffix(tail)
    }

    /// The statement that indexes every row the table holds (after the index was created or
    /// changed, or the table rebuilt).
    static func rebuildSQL(of table: String) -> String {
        let index = SQLIdentifier.quote(indexName(of: table))
        return "INSERT INTO \(index)(\(index)) VALUES('rebuild')"
    }

    /// The statements that bring the index to the model, appended to the table's plan:
    /// nothing when it is up to date; the index and triggers created (and the rows already
    /// there indexed) when the model gains searchable columns; everything made again and the
    /// index rebuilt when the columns changed or the table was rebuilt (`tableRebuilt`: the old
    /// table's triggers were dropped with it); the index and triggers dropped when the model no
    /// longer has searchable columns. Reads only.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` when `<table>_search` exists
    ///   and is not an FTS5 index of this table (the library will not drop it); ``DatabaseError``.
    static func installSteps(for schema: ModelSchema, on connection: Connection, tableIsNew: Bool,
                             tableRebuilt: Bool = false) throws -> [String] {
        let table = schema.tableName
        let name = indexName(of: table)
        let existing = try connection.rows(
            "SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE", [.text(name)]).first
        var existingIndex: String?
        if let existing {
            let sql: String = (try? existing[1] as String) ?? ""
            // Only the library's own index is changed or dropped: anything else of that name
            // (an FTS5 table the app made, over this table or another) is left alone.
            guard try existing[0] as String == "table", try isLibraryIndex(sql, of: table) else {
                if schema.searchSlots.isEmpty { return [] }
                throw ActiveObjectError.invalidModel(
                    model: schema.modelName,
                    reason: "searchableColumns needs the name \"\(name)\" for its index, and the file has a \(try existing[0] as String) of that name that the library did not make (it is not dropped): rename it, or the table")
            }
            existingIndex = sql
        }
        var triggers: [String: String] = [:]
        for row in try connection.rows(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE", [.text(table)]) {
            triggers[(try row[0] as String).lowercased()] = try? row[1] as String
        }
        let ownTriggers = triggerNames(of: table)
        // A trigger of one of those names is the library's when it writes the library's index.
        let indexReference = "INSERT INTO \(SQLIdentifier.quote(name))("
        let presentTriggers = tableRebuilt ? [] : ownTriggers.filter { triggers[$0.lowercased()]?.contains(indexReference) == true }
        let dropTriggers = presentTriggers.map { "DROP TRIGGER \(SQLIdentifier.quote($0))" }

        guard !schema.searchSlots.isEmpty else {
            // No searchable columns (any more): the index and its triggers go.
            return dropTriggers + (existingIndex != nil ? ["DROP TABLE \(SQLIdentifier.quote(name))"] : [])
        }
        let wanted = try creationSQL(for: schema)
        var steps: [String] = []
        let indexChanged = existingIndex != wanted.index
        if indexChanged {
            steps += dropTriggers
            if existingIndex != nil { steps.append("DROP TABLE \(SQLIdentifier.quote(name))") }
            steps.append(wanted.index)
            steps += wanted.triggers
        } else {
            let triggersCurrent = !tableRebuilt
                && zip(ownTriggers, wanted.triggers).allSatisfy { triggers[$0.0.lowercased()] == $0.1 }
            if triggersCurrent { return [] }
            steps += dropTriggers
            steps += wanted.triggers
        }
        // A new table has no rows to index; any other may (written before the index, or while
        // the triggers were missing or different). An index left by a table dropped and made
        // again holds the old rows' words: rebuilt (emptied) too.
        if !tableIsNew || existingIndex != nil { steps.append(rebuildSQL(of: table)) }
        return steps
    }
}
