import Foundation

extension ActiveRecord where Self: ActiveObject {
    /// Creates the model's table if it does not exist, then adds every declared column the
    /// table lacks, and the declared indexes and unique constraints. Idempotent.
    ///
    /// Non-optional columns are `NOT NULL DEFAULT <the property's default>`, so columns can be
    /// added to a populated table. Columns the model no longer declares are left alone.
    ///
    /// ```swift
    /// try Person.createTable()
    /// ```
    public static func createTable() throws {
        let schema = try ModelSchema.of(self)
        guard let database = self.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        try createTable(in: database)
    }

    /// ``createTable()`` in the given database (for use inside a migration step).
    public static func createTable(in database: Database) throws {
        let schema = try ModelSchema.of(self)
        let ddl = try SchemaDDL(schema: schema, context: schema.context(in: database))
        try database.transaction {
            try database.withWriter { connection in
                let existing = try connection.rows("PRAGMA table_info(\(schema.quotedTable))")
                if existing.isEmpty {
                    try connection.execute(ddl.createTableSQL)
                } else {
                    let names = Set(try existing.map { (try $0["name"] as String).lowercased() })
                    for (index, column) in schema.columns.enumerated() where !names.contains(column.name.lowercased()) {
                        try connection.execute("ALTER TABLE \(schema.quotedTable) ADD COLUMN \(ddl.columnDefinitions[index])")
                    }
                }
                for statement in ddl.indexSQL { try connection.execute(statement) }
            }
        }
    }

    /// The same as ``createTable()``, under ormapper's name.
    public static func migrate() throws { try createTable() }

    /// The same as ``createTable(in:)``, under ormapper's name.
    public static func migrate(in database: Database) throws { try createTable(in: database) }
}

/// The DDL for a model: `CREATE TABLE`, column definitions, indexes.
struct SchemaDDL {
    let createTableSQL: String
    /// `"name" TEXT NOT NULL DEFAULT ''`, by slot.
    let columnDefinitions: [String]
    let indexSQL: [String]

    init(schema: ModelSchema, context: ValueContext, tableName: String? = nil, autoIncrement: Bool = false) throws {
        let defaults = try schema.prototype.encodedValues(schema: schema, context: context)
        var definitions: [String] = []
        var indexes: [String] = []
        for (slot, column) in schema.columns.enumerated() {
            var definition = "\(column.quotedName) \(column.columnType(dateStrategy: context.dateStrategy).rawValue)"
            if !column.isNullable { definition += " NOT NULL" }
            definition += " DEFAULT \(SQLLiteral.render(defaults[slot]))"
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

/// Renders values as SQL literals, for `DEFAULT` clauses only (data is always bound).
enum SQLLiteral {
    static func render(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let int): return String(int)
        case .real(let real):
            if real.isInfinite { return real < 0 ? "-9e999" : "9e999" }
            return "(\(String(real)))"
        case .text(let text): return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data): return "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }
}
