import ActiveObjects

extension ClassPlan {
    /// Plans one `@Column` per column (the primary key is `ActiveObject.id`), and the notes
    /// for what `@Column` cannot express. `models` are all the classes being generated, for
    /// foreign keys.
    mutating func plan(table: TableInfo, naming: NamingConvention, models: [ClassPlan]) {
        let keysByColumn = Dictionary(
            table.foreignKeys.filter { $0.columns.count == 1 }.map { ($0.columns[0].lowercased(), $0) },
            uniquingKeysWith: { first, _ in first })
        for key in table.foreignKeys where key.columns.count > 1 {
            notes.append("composite foreign key (\(key.columns.joined(separator: ", "))) references "
                         + "\(key.parentTable)(\(key.parentColumns.map { $0 ?? "?" }.joined(separator: ", "))): no relation generated")
        }
        if let key = keysByColumn[primaryKey.lowercased()] {
            notes.append("the primary key \(primaryKey) references \(key.parentTable): no relation generated")
        }

        for (position, column) in table.columns.enumerated() where column.name != primaryKey {
            let key = keysByColumn[column.name.lowercased()]
            let isKey = key != nil && TypeMapping.canHoldKey(declared: column.declaredType)
            var property = makeProperty(column, position: position, naming: naming, isKey: isKey)
            if let key {
                applyForeignKey(key, column: column, to: &property, models: models)
            }
            applyIndexes(table.indexes, to: &property)
            properties.append(property)
        }

        for index in table.indexes where index.origin != "pk" {
            let columns = index.columns
            if columns.count == 1, let single = columns[0], !index.partial,
               table.columns.contains(where: { $0.name.lowercased() == single.lowercased() && $0.name != primaryKey }) {
                continue  // expressed as `unique:` / `indexed:`
            }
            if columns.count == 1, columns[0]?.lowercased() == primaryKey.lowercased(), !index.partial { continue }
            notes.append(Self.describe(index, table: table.name))
        }
    }

    /// The property for a column: name, type, optionality and initial value.
    private func makeProperty(_ column: TableInfo.ColumnInfo, position: Int, naming: NamingConvention,
                              isKey: Bool) -> PropertyPlan {
        var notes: [String] = []
        var name: String
        if let camel = SwiftNames.lowerCamel(column.name) {
            name = camel.first!.isNumber ? "column" + camel : camel
            if !column.name.allSatisfy(SwiftNames.isIdentifierCharacter) || name != camel {
                notes.append("column \(SQLDefault.swiftString(column.name)) has no exact Swift spelling")
            }
        } else {
            name = "column\(position + 1)"
            notes.append("column \(SQLDefault.swiftString(column.name)) has no Swift spelling")
        }
        if SwiftNames.unusableNames.contains(name) {
            notes.append("`\(name)` cannot name a property")
            name += "Value"
        } else if SwiftNames.activeObjectMembers.contains(name) {
            notes.append("`\(name)` is a member of ActiveObject")
            name += "Value"
        }
        let unique = ModelPlan.unique(name, taken: Set(properties.map(\.name)).union(SwiftNames.activeObjectMembers))
        if unique != name {
            notes.append("renamed: another column is already \(name)")
            name = unique
        }

        let (type, typeNote) = TypeMapping.swiftType(declared: column.declaredType, isKey: isKey)
        if let typeNote { notes.append(typeNote) }
        let isOptional = !column.notNull
        var initialValue = isOptional ? "nil" : type.zeroValue
        if let sql = column.defaultSQL {
            let parsed = SQLDefault(sql: sql)
            if let literal = parsed.swiftLiteral(for: type) {
                initialValue = literal
            } else if parsed != .null {
                notes.append("SQL default \(Self.oneLine(sql)) is not a Swift literal: set \(name) before saving")
            }
        }
        return PropertyPlan(
            column: column.name, name: name, type: type, isOptional: isOptional, initialValue: initialValue,
            explicitColumnName: naming.columnNaming.columnName(for: name) != column.name, notes: notes)
    }

    /// Makes the property an `Int64` foreign key with `references:`, when the parent has a model.
    private func applyForeignKey(_ key: TableInfo.ForeignKeyInfo, column: TableInfo.ColumnInfo,
                                 to property: inout PropertyPlan, models: [ClassPlan]) {
        let target = "\(key.parentTable)(\(key.parentColumns[0] ?? "primary key"))"
        guard TypeMapping.canHoldKey(declared: column.declaredType) else {
            property.notes.append("references \(target), but is not an integer column: no relation generated")
            return
        }
        let parent = models.first(where: { $0.table == key.parentTable })
            ?? models.first(where: { $0.table.lowercased() == key.parentTable.lowercased() })
        guard let parent else {
            property.notes.append("references \(target), which has no generated model: no relation generated")
            return
        }
        if let parentColumn = key.parentColumns[0], parentColumn.lowercased() != parent.primaryKey.lowercased() {
            property.notes.append("references \(target), which is not its primary key: no relation generated")
            return
        }
        property.references = parent.className
        property.onDelete = Self.action(key.onDelete)
        if key.onUpdate.uppercased() != "NO ACTION" {
            property.notes.append("ON UPDATE \(key.onUpdate) is kept by the database; @Column does not express it")
        }
    }

    /// `unique: true` / `indexed: true` from the single-column indexes on the property's column.
    private func applyIndexes(_ indexes: [TableInfo.IndexInfo], to property: inout PropertyPlan) {
        let own = indexes.filter {
            $0.origin != "pk" && !$0.partial && $0.columns.count == 1 && $0.columns[0]?.lowercased() == property.column.lowercased()
        }
        property.unique = own.contains(where: \.unique)
        // A foreign key is indexed by `references:` already.
        property.indexed = !property.unique && property.references == nil && !own.isEmpty
    }

    /// `.cascade` for `CASCADE`; nil for `NO ACTION` (the default).
    static func action(_ sql: String) -> String? {
        switch sql.uppercased() {
        case "CASCADE": return ".cascade"
        case "SET NULL": return ".setNull"
        case "SET DEFAULT": return ".setDefault"
        case "RESTRICT": return ".restrict"
        default: return nil
        }
    }

    /// A note for an index `@Column` cannot express (several columns, an expression, a WHERE).
    private static func describe(_ index: TableInfo.IndexInfo, table: String) -> String {
        let columns = index.columns.map { $0 ?? "<expression>" }.joined(separator: ", ")
        let kind = index.columns.count > 1 ? "composite " : ""
        let what = "\(kind)\(index.unique ? "unique " : "")index \(index.name) on (\(columns))"
        if let sql = index.sql { return "\(what): `\(oneLine(sql))`" }
        return "\(what): `UNIQUE (\(columns))` in the CREATE TABLE"
    }

    /// SQL on one line, for comments.
    static func oneLine(_ sql: String) -> String {
        sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }).joined(separator: " ")
    }
}
