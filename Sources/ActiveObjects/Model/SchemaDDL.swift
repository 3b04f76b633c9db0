/// The DDL for a model: `CREATE TABLE`, column definitions, indexes, and the literal each
/// column gives the rows it is added to.
struct SchemaDDL {
    /// One index the model declares.
    struct Index {
        /// The index's name, unquoted (`person_email_unique`).
        let name: String
        /// `CREATE [UNIQUE] INDEX IF NOT EXISTS …` on the model's table and column names.
        let sql: String
    }

    let createTableSQL: String
    /// `"name" TEXT NOT NULL DEFAULT ''`, by slot.
    let columnDefinitions: [String]
    /// The indexes the model declares, on its own table and column names.
    let indexes: [Index]
    /// By slot, the SQL literal of the value rows already in a table get when the column is
    /// added to it: the `DEFAULT`; for a column whose default is computed at run time, the
    /// prototype's value when `NOT NULL` (SQLite needs one) or `NULL`; for a key column, the
    /// prototype's value (`NULL` for a key SQLite numbers).
    let fillLiterals: [String]

    /// The DDL of `schema`'s table (named `tableName` when given), with the defaults encoded
    /// in `context` and rendered for a database whose text encoding is `textEncoding`.
    ///
    /// - Parameters:
    ///   - runtimeDefaults: the slots whose default is computed at run time (see
    ///     ``RuntimeDefaults``): no `DEFAULT` clause, so the value is never frozen into the SQL.
    ///   - columnNames: names to give some slots' columns instead of the model's (a rebuild
    ///     creates a renamed column under its old name and renames it afterwards, so that the
    ///     indexes and triggers it recreates still name it). Indexes always use the model's.
    ///   - autoIncrement: the key is `AUTOINCREMENT` — the rowid column, or a single declared
    ///     `INTEGER` key column (the rowid's alias), which then carries `PRIMARY KEY
    ///     AUTOINCREMENT` itself (a table constraint cannot).
    ///   - keptDefaults: by slot, a `DEFAULT` expression of the table a rebuild keeps
    ///     (`CURRENT_TIMESTAMP`), instead of the model's default or none.
    ///   - onUpdate: by slot, the `ON UPDATE` action a rebuild keeps for a foreign key (the
    ///     model declares `ON DELETE` only).
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)`` for a default that
    ///   cannot be written; ``ActiveObjectError/invalidModel(model:reason:)`` for a model
    ///   with no column and no key, or a foreign key to a model without a single key column.
    init(schema: ModelSchema, context: ValueContext, textEncoding: SQLLiteral.TextEncoding = .utf8,
         tableName: String? = nil, autoIncrement: Bool = false,
         runtimeDefaults: Set<Int> = [], columnNames: [Int: String] = [:],
         keptDefaults: [Int: String] = [:], onUpdate: [Int: String] = [:]) throws {
        let defaults = try schema.defaultValues(context: context)
        var definitions: [String] = []
        var indexes: [Index] = []
        var fills: [String] = []
        let keySlots = Set(schema.keySlots)
        func literal(_ value: DatabaseValue, column: String) throws -> String {
            do {
                return try SQLLiteral.render(value, textEncoding: textEncoding)
            } catch {
                throw ActiveObjectError.invalidValue(table: schema.tableName, column: column,
                                                     reason: "its default cannot be written: \(error)")
            }
        }
        for (slot, column) in schema.columns.enumerated() {
            let name = columnNames[slot].map(SQLIdentifier.quote) ?? column.quotedName
            var definition = "\(name) \(column.columnType(dateStrategy: context.dateStrategy).rawValue)"
            if !column.isNullable { definition += " NOT NULL" }
            // A key column has no DEFAULT: every row names its own key (a prototype's default,
            // such as a random UUID, would be one shared value), and a key column is never
            // added to a populated table. Nor has a column whose default is computed at run
            // time: the moment the table was created is no default for rows written later.
            if keySlots.contains(slot) {
                fills.append((try? SQLLiteral.render(defaults[slot], textEncoding: textEncoding)) ?? "NULL")
            } else if let kept = keptDefaults[slot] {
                // An expression SQLite evaluates per insert: not frozen, and other tools' inserts
                // rely on it.
                definition += " DEFAULT \(kept)"
                fills.append(runtimeDefaults.contains(slot) && column.isNullable ? "NULL" : try literal(defaults[slot], column: column.name))
            } else if runtimeDefaults.contains(slot) {
                fills.append(column.isNullable ? "NULL" : try literal(defaults[slot], column: column.name))
            } else {
                let rendered = try literal(defaults[slot], column: column.name)
                definition += " DEFAULT \(rendered)"
                fills.append(rendered)
            }
            if let parent = column.options.references {
                definition += " REFERENCES \(try Self.referencedColumn(of: parent, from: schema, column: column.name))"
                definition += " ON DELETE \(column.options.onDelete.rawValue)"
                if let action = onUpdate[slot] { definition += " ON UPDATE \(action)" }
            }
            definitions.append(definition)
            let bare = "\(schema.tableName)_\(column.name)"
            if column.options.unique {
                let name = bare + "_unique"
                indexes.append(Index(name: name, sql: "CREATE UNIQUE INDEX IF NOT EXISTS \(SQLIdentifier.quote(name)) ON \(schema.quotedTable)(\(column.quotedName))"))
            }
            if column.options.indexed || (column.options.references != nil && !column.options.unique) {
                // Foreign keys are indexed too: deletes of the parent look children up by them.
                let name = bare + "_index"
                indexes.append(Index(name: name, sql: "CREATE INDEX IF NOT EXISTS \(SQLIdentifier.quote(name)) ON \(schema.quotedTable)(\(column.quotedName))"))
            }
        }
        columnDefinitions = definitions
        self.indexes = indexes
        fillLiterals = fills
        var all = definitions
        var options = ""
        switch schema.key {
        case .rowID(_, isHidden: true):
            break   // the hidden rowid: no key column
        case .rowID:
            all.insert("\(schema.quotedPrimaryKey) INTEGER PRIMARY KEY" + (autoIncrement ? " AUTOINCREMENT" : ""), at: 0)
        case .columns(let slots):
            if autoIncrement, let slot = Self.rowIDAliasSlot(of: schema, dateStrategy: context.dateStrategy), slots == [slot] {
                all[slot] += " PRIMARY KEY AUTOINCREMENT"
            } else {
                let names = slots.map { columnNames[$0].map(SQLIdentifier.quote) ?? schema.columns[$0].quotedName }
                all.append("PRIMARY KEY (\(names.joined(separator: ", ")))")
            }
            if schema.declaresWithoutRowID { options = " WITHOUT ROWID" }
        }
        if all.isEmpty {
            throw ActiveObjectError.invalidModel(model: schema.modelName, reason: "it declares no column and no key to create a table with")
        }
        let table = tableName.map(SQLIdentifier.quote) ?? schema.quotedTable
        createTableSQL = "CREATE TABLE IF NOT EXISTS \(table) (\(all.joined(separator: ", ")))\(options)"
    }

    /// The slot of the model's key column when the model's table makes it the rowid's alias:
    /// one declared `INTEGER` key column, in a table with rowids (`primaryKey = "contactid"`
    /// with `@Column var contactid: Int64?`). Nil otherwise.
    static func rowIDAliasSlot(of schema: ModelSchema, dateStrategy: DateStrategy) -> Int? {
        guard case .columns(let slots) = schema.key, slots.count == 1, !schema.declaresWithoutRowID,
              schema.columns[slots[0]].columnType(dateStrategy: dateStrategy) == .integer else { return nil }
        return slots[0]
    }

    /// The names of the table's columns in the order `createTableSQL` declares them, under the
    /// model's names: the rowid column first when it is declared, then the columns by slot.
    static func tableColumnNames(of schema: ModelSchema) -> [String] {
        var names = schema.columns.map(\.name)
        if case .rowID(let column, isHidden: false) = schema.key { names.insert(column, at: 0) }
        return names
    }

    /// `"Customers"("CustomerID")`: the table and key column a foreign key to `parent` names.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` when `parent`'s key is not
    ///   one column other tables can reference (a composite key, a hidden rowid).
    static func referencedColumn(of parent: ActiveObject.Type, from schema: ModelSchema, column: String) throws -> String {
        let parentSchema = try ModelSchema.of(parent)
        guard let key = parentSchema.referencedKey else {
            throw ActiveObjectError.invalidModel(
                model: schema.modelName,
                reason: "column \(column) references \(parentSchema.modelName), whose key \(parent.primaryKeys) is not one column a foreign key can name")
        }
        return "\(parentSchema.quotedTable)(\(SQLIdentifier.quote(key.name)))"
    }
}
