import ActiveObjects

extension ClassPlan {
    /// Plans one `@Column` per column (a rowid alias is `ActiveObject.id` instead), and the
    /// notes for what `@Column` cannot express. `models` are all the classes being generated,
    /// for foreign keys; `softDelete` allows the `.deletedAt` role (see ``RoleMapping``).
    mutating func plan(table: TableInfo, naming: NamingConvention, softDelete: Bool = false, models: [ClassPlan]) {
        let keysByColumn = Dictionary(
            table.foreignKeys.filter { $0.columns.count == 1 }.map { ($0.columns[0].lowercased(), $0) },
            uniquingKeysWith: { first, _ in first })
        for key in table.foreignKeys where key.columns.count > 1 {
            notes.append("composite foreign key (\(key.columns.joined(separator: ", "))) references "
                         + "\(key.parentTable)(\(key.parentColumns.map { $0 ?? "?" }.joined(separator: ", "))): "
                         + "no relation generated (a relation needs a single-column key)")
        }
        // (A rowid alias that is a foreign key is a `.natural` key, see `TableInfo.key`.)
        var rowidAlias: String?
        if case .rowidAlias(let column) = key { rowidAlias = column }
        switch key {
        case .none:
            about.append("A view: read-only (`isReadOnly`: writes throw, `createTable()` creates nothing).")
            if let idColumn = table.columns.first(where: { $0.name.lowercased() == "id" }) {
                about.append("No key is inferred: `id` is nil (`primaryKey` names no column, so that the view's "
                             + "\(idColumn.name) column is not taken for one). Name a column that identifies rows "
                             + "in `primaryKey` to use `find(key:)`.")
            } else {
                about.append("No key is inferred: `id` is nil. Name a column that identifies rows in `primaryKey` "
                             + "to use `find(key:)`.")
            }
        case .rowid: about.append("The table has no primary key: `id` is its rowid.")
        case .composite where withoutRowID, .natural where withoutRowID:
            about.append("A WITHOUT ROWID table: `id` is always nil; `find(key:)` finds a row.")
        default: break
        }
        if case .composite(let columns) = key { uniqueColumnSets.append(Set(columns.map { $0.lowercased() })) }
        for index in table.indexes where index.unique && !index.partial && index.columns.count > 1 {
            let columns = index.columns.compactMap { $0?.lowercased() }
            if columns.count == index.columns.count, !uniqueColumnSets.contains(Set(columns)) {
                uniqueColumnSets.append(Set(columns))
            }
        }
        let keyColumns = Set(key.declaredColumns)
        let compositeForeignKeyColumns = Set(table.foreignKeys.filter { $0.columns.count > 1 }.flatMap(\.columns))
        var rolesTaken: [GeneratedRole: String] = [:]

        for (position, column) in table.columns.enumerated() where column.name != rowidAlias {
            let foreignKey = keysByColumn[column.name.lowercased()]
            let isKey = keyColumns.contains(column.name)
            let holdsKey = isKey || foreignKey != nil || compositeForeignKeyColumns.contains(column.name)
            var property = makeProperty(column, position: position, naming: naming, isKey: holdsKey, inView: isReadOnly)
            if isKey {
                property.isKey = true
                if property.isOptional {
                    // SQLite lets NULL into a key column without NOT NULL (a legacy quirk of
                    // rowid tables); a key identifies a row, so the model requires one.
                    property.isOptional = false
                    if property.initialValue == "nil" { property.initialValue = property.type.zeroValue }
                }
            }
            if let foreignKey {
                applyForeignKey(foreignKey, column: column, to: &property, models: models)
            }
            applyIndexes(table.indexes, to: &property)
            if !holdsKey && !isReadOnly {  // a view's rows are what it says: no stamps, no bin
                Self.applyRole(column: column, to: &property, taken: &rolesTaken, softDelete: softDelete)
            }
            properties.append(property)
        }

        let primaryKeyColumns = Set(table.columns.filter { $0.primaryKeyPosition > 0 }.map { $0.name.lowercased() })
        for index in table.indexes where index.origin != "pk" {
            let columns = index.columns
            if index.unique, !index.partial, Set(columns.map { $0?.lowercased() ?? "" }) == primaryKeyColumns {
                continue  // repeats the primary key
            }
            if columns.count == 1, let single = columns[0], !index.partial,
               table.columns.contains(where: { $0.name.lowercased() == single.lowercased() && $0.name != rowidAlias }) {
                continue  // expressed as `unique:` / `indexed:`
            }
            if columns.count == 1, let alias = rowidAlias, columns[0]?.lowercased() == alias.lowercased(), !index.partial {
                continue  // `indexed:` has no meaning for `id`
            }
            notes.append(Self.describe(index, table: table.name))
        }
    }

    /// The property for a column: name, type, optionality and initial value.
    private func makeProperty(_ column: TableInfo.ColumnInfo, position: Int, naming: NamingConvention,
                              isKey: Bool, inView: Bool) -> PropertyPlan {
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

        var (type, typeNote) = TypeMapping.swiftType(declared: column.declaredType, isKey: isKey)
        if inView && column.declaredType.trimmingCharacters(in: .whitespaces).isEmpty {
            // An expression: its values say what it is.
            if let inferred = column.observed?.inferredType {
                type = inferred
                typeNote = "an expression without a declared type: \(inferred.rawValue) from the "
                    + "\(column.observed!.kinds) the view holds"
            } else if let observed = column.observed, observed.hasValues {
                typeNote = "an expression without a declared type, holding \(observed.kinds): "
                    + "no Swift type reads them all (String reads all but the BLOBs)"
            } else {
                typeNote = "an expression without a declared type, and no values to go by: mapped to String "
                    + "(which reads numbers too); give it the type its values have"
            }
        } else if !isKey, let fit = TypeMapping.fitting(type, observed: column.observed, declared: column.declaredType) {
            type = fit.type
            typeNote = fit.note
        }
        if let typeNote { notes.append(typeNote) }
        // A view's column may hold NULL whatever its source column declares (an outer join, an
        // aggregate over no rows): SQLite reports none of them NOT NULL.
        let isOptional = inView || !column.notNull
        var initialValue = isOptional ? "nil" : type.zeroValue
        if let sql = column.defaultSQL, !inView {
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

    /// Gives the property its role (see ``RoleMapping``) when its type can serve it, the role is
    /// free and `@Column(role:)` can express the column (it has no `unique:`); types a TEXT or
    /// untyped column whose default is the moment of the insert as a `Date`. A timestamp
    /// column starts as `Date()` when NOT NULL (a run-time default, never frozen into the
    /// table) and `nil` otherwise.
    static func applyRole(column: TableInfo.ColumnInfo, to property: inout PropertyPlan,
                          taken: inout [GeneratedRole: String], softDelete: Bool) {
        let defaultSQL = column.defaultSQL.map(oneLine)
        let isNowDefault = column.defaultSQL.map { SQLDefault(sql: $0).isCurrentTime } ?? false
        if isNowDefault, property.type == .string, TypeMapping.hasTextAffinity(declared: column.declaredType),
           column.observed?.accepts(.date) ?? true {
            // A timestamp kept as text: a String would be written as "" or NULL in place of
            // the default.
            property.notes.removeAll { $0.hasPrefix("no declared type") || $0.hasPrefix("declared type ") }
            let declared = column.declaredType.isEmpty ? "no declared type" : "declared \(column.declaredType)"
            property.notes.append("\(declared): typed Date for its default \(defaultSQL!) (stored as text)")
            property.type = .date
        }
        if isNowDefault, property.type == .date {
            property.notes.removeAll { $0.hasPrefix("SQL default ") }
            property.initialValue = property.isOptional ? "nil" : "Date()"
        }
        guard let role = RoleMapping.candidate(name: column.name, defaultSQL: column.defaultSQL, softDelete: softDelete) else {
            if property.type == .date, property.isOptional, !softDelete, RoleMapping.isSoftDeleteName(column.name) {
                property.notes.append("a soft-delete date? `activeobjects-gen --soft-delete` makes it @Column(role: .deletedAt)")
            }
            return
        }
        let fits: Bool
        switch role {
        case .createdAt, .updatedAt: fits = property.type == .date
        case .deletedAt: fits = property.type == .date && property.isOptional
        case .lockVersion: fits = (property.type == .int || property.type == .int64) && !property.isOptional
        }
        guard fits else { return }
        guard !property.unique else {
            property.notes.append("no role .\(role.rawValue): unique, which @Column(role:) cannot also say")
            if isNowDefault, property.isOptional { property.notes.append("SQL default \(defaultSQL!): set \(property.name) before saving") }
            return
        }
        if let other = taken[role] {
            // The library refuses two columns of one role.
            let why = "\(other) has the role .\(role.rawValue), and a model has one column per role"
            if isNowDefault {
                let start = property.isOptional ? "set \(property.name) before saving" : "starts as Date(), when the object is made"
                property.notes.append("SQL default \(defaultSQL!): \(start) (\(why))")
            } else {
                property.notes.append("no role: \(why)")
            }
            return
        }
        taken[role] = property.name
        property.role = role
        if role == .createdAt || role == .updatedAt {
            property.initialValue = property.isOptional ? "nil" : "Date()"
        }
    }

    /// Makes the property a foreign key with `references:`, typed like the key it points at,
    /// when the parent has a model and the key is the parent's single-column primary key.
    private func applyForeignKey(_ key: TableInfo.ForeignKeyInfo, column: TableInfo.ColumnInfo,
                                 to property: inout PropertyPlan, models: [ClassPlan]) {
        let target = key.parentTable + (key.parentColumns[0].map { "(\($0))" } ?? "")
        let parent = models.first(where: { $0.table == key.parentTable })
            ?? models.first(where: { $0.table.lowercased() == key.parentTable.lowercased() })
        guard let parent else {
            property.notes.append("references \(target), which has no generated model: no relation generated")
            return
        }
        let parentKey: String
        switch parent.key {
        case .rowidAlias(let column), .natural(let column):
            parentKey = column
        case .composite(let columns):
            let referenced = key.parentColumns[0]
            if let referenced, !columns.contains(where: { $0.lowercased() == referenced.lowercased() }) {
                property.notes.append("references \(target), which is not its primary key: no relation generated")
            } else {
                property.notes.append("references \(target), part of its composite primary key (\(columns.joined(separator: ", "))): "
                                      + "no relation generated (a relation needs a single-column key)")
            }
            return
        case .rowid:
            property.notes.append("references \(key.parentTable), which has no primary key: no relation generated")
            return
        case .none:
            property.notes.append("references \(key.parentTable), a view: no relation generated")
            return
        }
        if let parentColumn = key.parentColumns[0], parentColumn.lowercased() != parentKey.lowercased() {
            property.notes.append("references \(target), which is not its primary key: no relation generated")
            return
        }
        guard let keyType = parent.keyType else { return }
        if property.type != keyType {
            // The key's type, so that the relation compares like with like.
            let declared = column.declaredType.isEmpty ? "no declared type" : "declared \(column.declaredType)"
            property.notes.removeAll { $0.hasPrefix("no declared type") || $0.hasPrefix("declared type ") || $0.hasPrefix("SQL default ") }
            property.notes.append("\(declared): typed \(keyType.rawValue) like \(key.parentTable)(\(parentKey)), the key it references")
            property.type = keyType
            property.initialValue = property.isOptional ? "nil" : keyType.zeroValue
            if let sql = column.defaultSQL, let literal = SQLDefault(sql: sql).swiftLiteral(for: keyType) {
                property.initialValue = literal
            }
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
        // A single key column is unique already.
        property.unique = own.contains(where: \.unique) && !(property.isKey && key.declaredColumns.count == 1)
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
