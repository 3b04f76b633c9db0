import ActiveObjects

/// How generated models name their columns: the `--naming` option.
public enum NamingConvention: String, CaseIterable, Sendable {
    /// Property name = column name (the library's default; no override is generated).
    case asIs = "as-is"
    /// `firstName` ↔ `first_name`: `override class var columnNaming { .snakeCase }`.
    case snake
    /// `firstName` ↔ `FIRST_NAME`: `override class var columnNaming { .upperSnakeCase }`.
    case upperSnake = "upper-snake"

    var columnNaming: ColumnNaming {
        switch self {
        case .asIs: return .asIs
        case .snake: return .snakeCase
        case .upperSnake: return .upperSnakeCase
        }
    }

    /// The `columnNaming` override to generate, nil for the default.
    var swiftOverride: String? {
        switch self {
        case .asIs: return nil
        case .snake: return ".snakeCase"
        case .upperSnake: return ".upperSnakeCase"
        }
    }
}

/// Everything the writer prints, decided from the schema: one ``ClassPlan`` per table.
struct ModelPlan: Equatable {
    var sourceName: String
    var command: String
    var classes: [ClassPlan]
    /// Tables and views without a model, with the reason.
    var skipped: [Skipped]

    struct Skipped: Equatable {
        /// `table`, `view`, `virtual table`…: what the warning calls it.
        var kind: String
        var name: String
        var reason: String
    }
}

struct ClassPlan: Equatable {
    var table: String
    var className: String
    /// What relation names are made of: the class name, without the `Record` that a reserved
    /// name gets (`tasks` → `TaskRecord`, yet `project.tasks`).
    var relationStem: String
    var key: TableKey
    var withoutRowID: Bool
    /// The Swift type of the key that a single-column foreign key to this table holds
    /// (`Int64` for a rowid alias); nil when no relation can point at it (composite key, rowid).
    var keyType: SwiftType?
    var tableNameOverride: String?
    var columnNamingOverride: String?
    /// A view's model: `isReadOnly`, no key, columns optional.
    var isReadOnly = false
    /// The `searchableColumns` override (property names): the columns of the table's own
    /// full-text index, `<table>_search`, when the library made it.
    var searchableColumns: [String] = []
    /// The column sets (lowercased) of the table's unique indexes and constraints over several
    /// columns, its composite primary key among them: which pairs identify a row.
    var uniqueColumnSets: [Set<String>] = []
    /// Lines of the class's doc comment after its first line.
    var about: [String] = []
    /// Facts about the table that the properties do not express (composite indexes…).
    var notes: [String] = []
    var properties: [PropertyPlan] = []
    var relations: [RelationPlan] = []

    /// Every member name taken in the class, including those of `ActiveObject`.
    var takenNames: Set<String> {
        SwiftNames.activeObjectMembers.union(properties.map(\.name)).union(relations.map(\.name))
    }

    /// The `primaryKey` override: the key column when it is not `id`, always for a declared
    /// key column (so that no reader wonders whether `id` is the rowid), `rowid` for none. A
    /// view keeps the default `id` unless it has a column of that name (in any case), which
    /// the library would take for its key: then `rowid`, which names no column of a view.
    var primaryKeyOverride: String? {
        switch key {
        case .rowidAlias(let column): return column == "id" ? nil : column
        case .natural(let column): return column
        case .rowid: return "rowid"
        case .composite: return nil
        case .none: return properties.contains(where: { $0.column.lowercased() == "id" }) ? "rowid" : nil
        }
    }
}

struct PropertyPlan: Equatable {
    var column: String
    /// The property name, unescaped.
    var name: String
    var type: SwiftType
    var isOptional: Bool
    /// The Swift expression after `=`.
    var initialValue: String
    var explicitColumnName: Bool
    var unique = false
    var indexed = false
    /// Whether the column is (part of) the primary key.
    var isKey = false
    /// The parent class of a foreign key, and the `onDelete:` action (nil for NO ACTION).
    var references: String?
    var onDelete: String?
    /// `@Column(role:)`: a timestamp, soft-delete or version column (see ``RoleMapping``).
    var role: GeneratedRole?
    var notes: [String] = []
}

struct RelationPlan: Equatable {
    enum Kind: String { case belongsTo, hasOne, hasMany, hasManyThrough }
    var name: String
    var kind: Kind
    var relatedClass: String
    /// The foreign-key property (of this class for belongsTo, of the related one for hasOne and
    /// hasMany, of the join class for hasManyThrough: the one pointing at this class).
    var keyProperty: String
    /// For hasManyThrough: the join class and its property pointing at the related class.
    var joinClass: String? = nil
    var targetKeyProperty: String? = nil
}

extension ModelPlan {
    /// Plans the models for `tables` (all of them, or those named in `selected`); `softDelete`
    /// gives `deleted_at` columns the `.deletedAt` role (`--soft-delete`).
    /// - Throws: ``GeneratorError/unknownTable(_:)`` and ``GeneratorError/noTables(_:)``.
    init(tables: [TableInfo], selected: [String], naming: NamingConvention, softDelete: Bool = false,
         sourceName: String) throws {
        self.sourceName = sourceName
        command = (["activeobjects-gen", sourceName] + selected.flatMap { ["--table", $0] }
                   + (naming == .asIs ? [] : ["--naming", naming.rawValue])
                   + (softDelete ? ["--soft-delete"] : [])).joined(separator: " ")
        guard !tables.isEmpty else { throw GeneratorError.noTables("\(sourceName) has none") }
        var chosen = tables
        if !selected.isEmpty {
            chosen = []
            for name in selected {
                guard let table = tables.first(where: { $0.name == name })
                        ?? tables.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                    throw GeneratorError.unknownTable(name)
                }
                if !chosen.contains(table) { chosen.append(table) }
            }
        }
        // Tables first, then views: tables keep the plain class names when a view's name
        // would make the same one.
        chosen.sort { ($0.kind == "view" ? 1 : 0, $0.name) < ($1.kind == "view" ? 1 : 0, $1.name) }

        skipped = []
        classes = []
        var usedClassNames = Set<String>()
        for table in chosen {
            let lowerName = table.name.lowercased()
            if lowerName.hasPrefix("activeobjects_sync_") || lowerName.hasPrefix("activeobjects_hub_") {
                // SyncEngine's and SyncHub's own tables.
                skipped.append(Skipped(kind: Self.kindName(table.kind), name: table.name,
                                       reason: "synchronization bookkeeping that ActiveObjects' SyncEngine or SyncHub keeps"))
                continue
            }
            switch table.key {
            case .failure(let reason):
                skipped.append(Skipped(kind: Self.kindName(table.kind), name: table.name, reason: reason.description))
            case .success(let key):
                let (className, stem) = Self.className(for: table.name, taken: usedClassNames)
                usedClassNames.insert(className)
                classes.append(ClassPlan(
                    table: table.name, className: className, relationStem: stem, key: key, withoutRowID: table.withoutRowID,
                    keyType: Self.keyType(of: table, key: key),
                    tableNameOverride: ColumnNaming.snakeCase.columnName(for: className) == table.name ? nil : table.name,
                    columnNamingOverride: naming.swiftOverride, isReadOnly: key == .none))
            }
        }
        guard !classes.isEmpty else {
            let reasons = skipped.map { "\($0.name) (\($0.reason))" }.joined(separator: ", ")
            throw GeneratorError.noTables("every table was skipped: \(reasons)")
        }

        let tablesByName = Dictionary(chosen.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for index in classes.indices {
            classes[index].plan(table: tablesByName[classes[index].table]!, naming: naming, softDelete: softDelete,
                                models: classes)
        }
        addSearchableColumns(from: tables)
        addRelations()
        addManyToManyRelations()
    }

    /// What the warnings call a table of this kind.
    private static func kindName(_ kind: String) -> String {
        switch kind {
        case "view": return "view"
        case "virtual": return "virtual table"
        default: return "table"
        }
    }

    /// The Swift type of the key a single-column foreign key to this table holds.
    private static func keyType(of table: TableInfo, key: TableKey) -> SwiftType? {
        switch key {
        case .rowidAlias: return .int64
        case .natural(let name):
            guard let column = table.columns.first(where: { $0.name == name }) else { return nil }
            return TypeMapping.swiftType(declared: column.declaredType, isKey: true).type
        case .composite, .rowid, .none: return nil
        }
    }

    /// `people` → `Person`; a reserved name (`sendable` → `SendableRecord`) or a taken one
    /// (`Person2`) gets a suffix. Also the stem of the relation names (`Sendable`; `Person2`).
    static func className(for table: String, taken: Set<String>) -> (name: String, relationStem: String) {
        var name = SwiftNames.className(forTable: table) ?? "Table"
        if name.first!.isNumber { name = "Table" + name }
        guard SwiftNames.reservedTypeNames.contains(name) else {
            let unique = unique(name, taken: taken)
            return (unique, unique)
        }
        let renamed = unique(name + "Record", taken: taken)
        return (renamed, renamed == name + "Record" ? name : renamed)
    }

    static func unique(_ name: String, taken: Set<String>) -> String {
        guard taken.contains(name) else { return name }
        var counter = 2
        while taken.contains(name + String(counter)) { counter += 1 }
        return name + String(counter)
    }
}
