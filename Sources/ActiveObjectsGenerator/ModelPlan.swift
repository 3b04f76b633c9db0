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
    var skipped: [(table: String, reason: String)]

    static func == (lhs: ModelPlan, rhs: ModelPlan) -> Bool {
        lhs.sourceName == rhs.sourceName && lhs.command == rhs.command && lhs.classes == rhs.classes
            && lhs.skipped.elementsEqual(rhs.skipped, by: { $0 == $1 })
    }
}

struct ClassPlan: Equatable {
    var table: String
    var className: String
    var primaryKey: String
    var tableNameOverride: String?
    var primaryKeyOverride: String?
    var columnNamingOverride: String?
    /// Facts about the table that the properties do not express (composite indexes…).
    var notes: [String] = []
    var properties: [PropertyPlan] = []
    var relations: [RelationPlan] = []

    /// Every member name taken in the class, including those of `ActiveObject`.
    var takenNames: Set<String> {
        SwiftNames.activeObjectMembers.union(properties.map(\.name)).union(relations.map(\.name))
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
    /// The parent class of a foreign key, and the `onDelete:` action (nil for NO ACTION).
    var references: String?
    var onDelete: String?
    var notes: [String] = []
}

struct RelationPlan: Equatable {
    enum Kind: String { case belongsTo, hasMany }
    var name: String
    var kind: Kind
    var relatedClass: String
    /// The foreign-key property (of this class for belongsTo, of the related one for hasMany).
    var keyProperty: String
}

extension ModelPlan {
    /// Plans the models for `tables` (all of them, or those named in `selected`).
    /// - Throws: ``GeneratorError/unknownTable(_:)`` and ``GeneratorError/noTables(_:)``.
    init(tables: [TableInfo], selected: [String], naming: NamingConvention, sourceName: String) throws {
        self.sourceName = sourceName
        command = (["activeobjects-gen", sourceName] + selected.flatMap { ["--table", $0] }
                   + (naming == .asIs ? [] : ["--naming", naming.rawValue])).joined(separator: " ")
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
            chosen.sort { $0.name < $1.name }
        }

        skipped = []
        classes = []
        var usedClassNames = Set<String>()
        for table in chosen {
            switch table.integerPrimaryKey {
            case .failure(let reason):
                skipped.append((table.name, reason.description))
            case .success(let primaryKey):
                let className = Self.className(for: table.name, taken: usedClassNames)
                usedClassNames.insert(className)
                classes.append(ClassPlan(
                    table: table.name, className: className, primaryKey: primaryKey,
                    tableNameOverride: ColumnNaming.snakeCase.columnName(for: className) == table.name ? nil : table.name,
                    primaryKeyOverride: primaryKey == "id" ? nil : primaryKey,
                    columnNamingOverride: naming.swiftOverride))
            }
        }
        guard !classes.isEmpty else {
            let reasons = skipped.map { "\($0.table) (\($0.reason))" }.joined(separator: ", ")
            throw GeneratorError.noTables("every table was skipped: \(reasons)")
        }

        let tablesByName = Dictionary(chosen.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for index in classes.indices {
            classes[index].plan(table: tablesByName[classes[index].table]!, naming: naming, models: classes)
        }
        addRelations()
    }

    /// `people` → `Person`; a reserved or taken name gets a suffix.
    private static func className(for table: String, taken: Set<String>) -> String {
        var name = SwiftNames.className(forTable: table) ?? "Table"
        if name.first!.isNumber { name = "Table" + name }
        if SwiftNames.reservedTypeNames.contains(name) { name += "Record" }
        return unique(name, taken: taken)
    }

    static func unique(_ name: String, taken: Set<String>) -> String {
        guard taken.contains(name) else { return name }
        var counter = 2
        while taken.contains(name + String(counter)) { counter += 1 }
        return name + String(counter)
    }

    /// `var group: BelongsTo<Group>` on children and `var people: HasMany<Person>` on parents.
    private mutating func addRelations() {
        for childIndex in classes.indices {
            let child = classes[childIndex]
            for property in child.properties {
                guard let parentName = property.references,
                      let parentIndex = classes.firstIndex(where: { $0.className == parentName }) else { continue }
                // belongsTo: `groupId` → `group`; else the parent's name.
                var base = SwiftNames.lowerCamel(parentName) ?? "parent"
                for suffix in ["Id", "ID"] where property.name.hasSuffix(suffix) && property.name.count > suffix.count {
                    base = String(property.name.dropLast(suffix.count))
                }
                if SwiftNames.unusableNames.contains(base) { base += "Record" }
                let belongsName = Self.unique(base, taken: classes[childIndex].takenNames)
                classes[childIndex].relations.append(
                    RelationPlan(name: belongsName, kind: .belongsTo, relatedClass: parentName, keyProperty: property.name))

                // hasMany: the children's plural; `messagesAsSender` when one child refers twice.
                var many = Inflection.plural(SwiftNames.lowerCamel(child.className) ?? "children")
                let references = child.properties.filter { $0.references == parentName }.count
                if childIndex == parentIndex && references == 1 {
                    many = "children"  // a tree: parent / children
                } else if references > 1 {
                    many += "As" + belongsName.prefix(1).uppercased() + belongsName.dropFirst()
                }
                let manyName = Self.unique(many, taken: classes[parentIndex].takenNames)
                classes[parentIndex].relations.append(
                    RelationPlan(name: manyName, kind: .hasMany, relatedClass: child.className, keyProperty: property.name))
            }
        }
    }
}
