/// The DDL for a model: `CREATE TABLE`, column definitions, indexes.
struct SchemaDDL {
    let createTableSQL: String
    /// `"name" TEXT NOT NULL DEFAULT ''`, by slot.
    let columnDefinitions: [String]
    let indexSQL: [String]

    /// The DDL of `schema`'s table (named `tableName` when given), with the defaults encoded
    /// in `context` and rendered for a database whose text encoding is `textEncoding`.
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)`` for a default that
    ///   cannot be written.
    init(schema: ModelSchema, context: ValueContext, textEncoding: SQLLiteral.TextEncoding = .utf8,
         tableName: String? = nil, autoIncrement: Bool = false) throws {
        let defaults = try schema.defaultValues(context: context)
        var definitions: [String] = []
        var indexes: [String] = []
        let keySlots = Set(schema.keySlots)
        for (slot, column) in schema.columns.enumerated() {
            var definition = "\(column.quotedName) \(column.columnType(dateStrategy: context.dateStrategy).rawValue)"
            if !column.isNullable { definition += " NOT NULL" }
            // A key column has no DEFAULT: every row names its own key (a prototype's default,
            // such as a random UUID, would be one shared value), and a key column is never
            // added to a populated table.
            if !keySlots.contains(slot) {
                do {
                    definition += " DEFAULT \(try SQLLiteral.render(defaults[slot], textEncoding: textEncoding))"
                } catch {
                    throw ActiveObjectError.invalidValue(table: schema.tableName, column: column.name,
                                                         reason: "its default cannot be written: \(error)")
                }
            }
            if let parent = column.options.references {
                definition += " REFERENCES \(try Self.referencedColumn(of: parent, from: schema, column: column.name))"
                definition += " ON DELETE \(column.options.onDelete.rawValue)"
            }
            definitions.append(definition)
            let bare = "\(schema.tableName)_\(column.name)"
            if column.options.unique {
                indexes.append("CREATE UNIQUE INDEX IF NOT EXISTS \(SQLIdentifier.quote(bare + "_unique")) ON \(schema.quotedTable)(\(column.quotedName))")
            }
            if column.options.indexed || (column.options.references != nil && !column.options.unique) {
                // Foreign keys are indexed too: deletes of the parent look children up by them.
                indexes.append("CREATE INDEX IF NOT EXISTS \(SQLIdentifier.quote(bare + "_index")) ON \(schema.quotedTable)(\(column.quotedName))")
            }
        }
        columnDefinitions = definitions
        indexSQL = indexes
        var all = definitions
        var options = ""
        switch schema.key {
        case .rowID(_, isHidden: true):
            break   // the hidden rowid: no key column
        case .rowID:
            all.insert("\(schema.quotedPrimaryKey) INTEGER PRIMARY KEY" + (autoIncrement ? " AUTOINCREMENT" : ""), at: 0)
        case .columns(let slots):
            all.append("PRIMARY KEY (\(slots.map { schema.columns[$0].quotedName }.joined(separator: ", ")))")
            if schema.declaresWithoutRowID { options = " WITHOUT ROWID" }
        }
        if all.isEmpty {
            throw ActiveObjectError.invalidModel(model: schema.modelName, reason: "it declares no column and no key to create a table with")
        }
        let table = tableName.map(SQLIdentifier.quote) ?? schema.quotedTable
        createTableSQL = "CREATE TABLE IF NOT EXISTS \(table) (\(all.joined(separator: ", ")))\(options)"
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
