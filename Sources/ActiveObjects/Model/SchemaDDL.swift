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
        let defaults = try schema.prototype.encodedValues(schema: schema, context: context)
        var definitions: [String] = []
        var indexes: [String] = []
        for (slot, column) in schema.columns.enumerated() {
            var definition = "\(column.quotedName) \(column.columnType(dateStrategy: context.dateStrategy).rawValue)"
            if !column.isNullable { definition += " NOT NULL" }
            do {
                definition += " DEFAULT \(try SQLLiteral.render(defaults[slot], textEncoding: textEncoding))"
            } catch {
                throw ActiveObjectError.invalidValue(table: schema.tableName, column: column.name,
                                                     reason: "its default cannot be written: \(error)")
            }
            if let parent = column.options.references {
                definition += " REFERENCES \(SQLIdentifier.quote(parent.tableName))(\(SQLIdentifier.quote(parent.primaryKey)))"
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
        let key = "\(schema.quotedPrimaryKey) INTEGER PRIMARY KEY" + (autoIncrement ? " AUTOINCREMENT" : "")
        let all = [key] + definitions
        let table = tableName.map(SQLIdentifier.quote) ?? schema.quotedTable
        createTableSQL = "CREATE TABLE IF NOT EXISTS \(table) (\(all.joined(separator: ", ")))"
    }
}
