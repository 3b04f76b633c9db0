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
    /// How text becomes words: Unicode word characters; case and diacritics folded (`É` finds
    /// `e`, `ß` finds `ss` is not folded: SQLite folds single characters only).
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
        let content = try SQLLiteral.render(.text(table))
        let indexSQL = "CREATE VIRTUAL TABLE \(index) USING fts5(\(list), content=\(content), "
            + "tokenize='\(tokenizer)', prefix='\(prefixLengths)')"
        let newValues = (["new.rowid"] + columns.map { "new.\($0)" }).joined(separator: ", ")
        let oldValues = (["'delete'", "old.rowid"] + columns.map { "old.\($0)" }).joined(separator: ", ")
        let insert = "INSERT INTO \(index)(rowid, \(list)) VALUES (\(newValues));"
        let delete = "INSERT INTO \(index)(\(index), rowid, \(list)) VALUES (\(oldValues));"
        // An UPDATE that changes none of the indexed columns (nor the rowid, which moves the
        // row) leaves the index alone.
        var updated = columns
        if case .rowID(let column, _) = schema.key, !KeyShape.rowIDNames.contains(column.lowercased()) {
            updated.append(SQLIdentifier.quote(column))
        }
        let names = triggerNames(of: table).map(SQLIdentifier.quote)
        let quotedTable = schema.quotedTable
        return (indexSQL, [
            "CREATE TRIGGER \(names[0]) AFTER INSERT ON \(quotedTable) BEGIN \(insert) END",
            "CREATE TRIGGER \(names[1]) AFTER DELETE ON \(quotedTable) BEGIN \(delete) END",
            "CREATE TRIGGER \(names[2]) AFTER UPDATE OF \(updated.joined(separator: ", ")) ON \(quotedTable) BEGIN \(delete) \(insert) END",
        ])
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
            let isOurs = (try existing[0] as String) == "table" && sql.hasPrefix("CREATE VIRTUAL TABLE")
                && sql.lowercased().contains("fts5")
            guard isOurs else {
                if schema.searchSlots.isEmpty { return [] }
                throw ActiveObjectError.invalidModel(
                    model: schema.modelName,
                    reason: "searchableColumns needs the name \"\(name)\" for its index, and the file has a \(try existing[0] as String) of that name that is not one")
            }
            existingIndex = sql
        }
        var triggers: [String: String] = [:]
        for row in try connection.rows(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE", [.text(table)]) {
            triggers[(try row[0] as String).lowercased()] = try? row[1] as String
        }
        let ownTriggers = triggerNames(of: table)
        let presentTriggers = tableRebuilt ? [] : ownTriggers.filter { triggers[$0.lowercased()] != nil }
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
        // the triggers were missing or different).
        if !tableIsNew { steps.append(rebuildSQL(of: table)) }
        return steps
    }
}
