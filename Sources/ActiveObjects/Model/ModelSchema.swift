import Foundation

/// One persisted property of a model.
struct SchemaColumn {
    /// The Swift property name (`lastPlayed`).
    let propertyName: String
    /// The column name (`last_played`), unquoted.
    let name: String
    /// The column name, quoted for SQL.
    let quotedName: String
    let options: ColumnOptions
    let accessor: ColumnAccessor

    var isNullable: Bool { accessor.isNullable }

    /// The declared SQL type, following the date strategy for dates.
    func columnType(dateStrategy: DateStrategy) -> ColumnType {
        accessor.isDate ? dateStrategy.columnType : accessor.columnType
    }
}

/// Everything ActiveObjects knows about one model class, built once (reflection on a
/// prototype) and cached by `ObjectIdentifier`: names, columns, accessors and SQL.
final class ModelSchema: @unchecked Sendable {
    // Safety of @unchecked Sendable: every stored property is immutable after `init` (the
    // `ModelSQL`s guard their own cache). The prototype object is never mutated after `init`
    // (only read — to evaluate `\.$column` key paths, and for its default values — under
    // `prototypeLock`: a `$name` getter takes the property's address, a formal modify access
    // that must not overlap another thread's read).

    let modelType: ActiveObject.Type
    let modelName: String
    let tableName: String
    /// The model's `primaryKey` (for composite keys, the first of `primaryKeys`).
    let primaryKey: String
    let quotedTable: String
    /// The quoted expression of `id` in SQL: the rowid column of rowid models, `"rowid"` for
    /// natural keys.
    let quotedPrimaryKey: String
    let columns: [SchemaColumn]
    /// The columns' accessors, by slot: the per-row loops index this array rather than copy
    /// `SchemaColumn`s (each copy retains and releases its strings).
    let accessors: [ColumnAccessor]
    /// The model's own date strategy override, if any.
    let dateStrategy: DateStrategy?
    /// A default-initialized instance: the columns' defaults, and what `\.$name` key paths
    /// are evaluated on.
    let prototype: ActiveObject
    /// Serializes key-path evaluations on `prototype` (see ``valueOnPrototype(at:)``).
    private let prototypeLock = NSRecursiveLock()
    /// Slot for each property name and column name; `-1` for `id`.
    private let slotByKey: [String: Int]
    /// Slot for each column property's byte offset in the object (what `\.$name` gives).
    private let slotByOffset: [Int: Int]
    /// How rows are identified.
    let key: KeyShape
    /// The slots of the columns with a ``ColumnRole``.
    let roles: ModelRoles
    /// Whether the model declares a `WITHOUT ROWID` table.
    let declaresWithoutRowID: Bool
    /// Whether the model only reads (``ActiveObject/isReadOnly``): every write is refused.
    let isReadOnly: Bool
    /// The slots of the ``ActiveObject/searchableColumns``, in the order given (empty: no
    /// full-text index).
    let searchSlots: [Int]
    /// The slot of a key that is one optional INTEGER column (`@Column var number: Int?`): on a
    /// table where it is the rowid alias, SQLite numbers the rows inserted with a nil key, and
    /// the object then gets that number. Nil for every other key.
    let autoNumberedKeySlot: Int?

    /// How to load the model's own SELECTs, where slot `i` is result column `i + 1`; also how
    /// to bind its columns (slot `i` to parameter `i + 1`, plus an offset).
    let canonicalSteps: [LoadStep]
    /// The SQL for the table layout the model declares.
    let declaredSQL: ModelSQL
    /// For natural keys on a table the model did not declare `WITHOUT ROWID`: the SQL for a
    /// file whose table turns out to be `WITHOUT ROWID` (another tool made it), or a view.
    /// For a read-only rowid model: the SQL for a view without the key column (`id` is NULL).
    private let withoutRowIDSQL: ModelSQL?

    /// Builds the schema of `type` (see ``of(_:)``, which caches it): reflects a prototype
    /// created with `type.init()` under `build`.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)``.
    init(_ type: ActiveObject.Type, build: PrototypeConstruction.SchemaBuild) throws {
        guard type != ActiveObject.self else {
            throw ActiveObjectError.invalidModel(model: "ActiveObject", reason: "the base class is not a model; subclass it")
        }
        modelType = type
        modelName = String(describing: type)
        tableName = type.tableName
        let keyNames = type.primaryKeys
        declaresWithoutRowID = type.withoutRowID
        isReadOnly = type.isReadOnly
        dateStrategy = type.dateStrategy
        try SQLIdentifier.validate(tableName, what: "table name", model: modelName)
        guard !keyNames.isEmpty else {
            throw ActiveObjectError.invalidModel(model: modelName, reason: "primaryKeys is empty")
        }
        for name in keyNames { try SQLIdentifier.validate(name, what: "primary key", model: modelName) }
        guard Set(keyNames.map { $0.lowercased() }).count == keyNames.count else {
            throw ActiveObjectError.invalidModel(model: modelName, reason: "primaryKeys \(keyNames) names a column twice")
        }
        primaryKey = keyNames[0]
        if tableName.lowercased().hasPrefix("sqlite_") {
            throw ActiveObjectError.invalidModel(model: modelName, reason: "table names starting with sqlite_ are reserved")
        }

        let (prototype, events) = build.makePrototype { type.init() }
        self.prototype = prototype
        let discovery = try ColumnDiscovery(prototype: prototype)
        let declaredOptions = try ColumnDeclarations.options(prototype: prototype, events: events, discovery: discovery)
        let naming = type.columnNaming
        var columns: [SchemaColumn] = []
        var slots: [String: Int] = [:]
        var usedNames: [String: String] = [:]
        for (discovered, options) in zip(discovery.columns, declaredOptions) {
            let name = options.name ?? naming.columnName(for: discovered.propertyName)
            try SQLIdentifier.validate(name, what: "column name of \(discovered.propertyName)", model: modelName)
            // SQLite column names are case-insensitive.
            if let other = usedNames[name.lowercased()] {
                throw ActiveObjectError.invalidModel(
                    model: modelName,
                    reason: "property \(discovered.propertyName) maps to column \"\(name)\", already used by \(other)")
            }
            usedNames[name.lowercased()] = "property \(discovered.propertyName)"
            let slot = columns.count
            slots[discovered.propertyName] = slot
            slots[name] = slot
            columns.append(SchemaColumn(propertyName: discovered.propertyName, name: name,
                                        quotedName: SQLIdentifier.quote(name),
                                        options: options, accessor: discovered.accessor))
        }

        roles = try Self.roles(of: columns, model: modelName)
        if let slot = roles.deletedAt, !prototype.withUnsafeObjectPointer({ columns[slot].accessor.isNull(in: $0) }) {
            // `@Column(role: .deletedAt) var deletedAt = Date()` infers `Date?` with a date:
            // every new object would be born in the bin.
            throw ActiveObjectError.invalidModel(
                model: modelName,
                reason: "property \(columns[slot].propertyName) has the role .deletedAt but a non-nil default: every new object would be soft-deleted; declare it `Date? = nil`")
        }
        try Self.checkRenames(of: columns, primaryKey: primaryKey, model: modelName)

        // The key: declared columns (natural or composite), or the rowid.
        let keySlots = keyNames.map { name in columns.firstIndex { $0.name.lowercased() == name.lowercased() } }
        if keySlots.allSatisfy({ $0 != nil }) {
            key = .columns(slots: keySlots.map { $0! })
        } else if keyNames.count == 1 {
            // Round 1: the integer primary key is `id`, under the name `primaryKey` gives.
            key = .rowID(column: primaryKey, isHidden: KeyShape.rowIDNames.contains(primaryKey.lowercased()))
            if let other = usedNames[primaryKey.lowercased()] {
                throw ActiveObjectError.invalidModel(
                    model: modelName, reason: "the primary key \"\(primaryKey)\" is also the column of \(other)")
            }
        } else {
            let missing = keyNames.filter { name in !columns.contains { $0.name.lowercased() == name.lowercased() } }
            throw ActiveObjectError.invalidModel(
                model: modelName,
                reason: "primaryKeys names \(missing.map { "\"\($0)\"" }.joined(separator: ", ")), which no @Column declares (a composite key is made of declared columns)")
        }
        var autoNumberedKeySlot: Int?
        if case .columns(let keySlots) = key, let optional = keySlots.first(where: { columns[$0].accessor.isNullable }) {
            if keySlots.count == 1 && columns[optional].accessor.columnType == .integer {
                // `Int?`: nil asks SQLite for the next number (the key is the rowid alias).
                autoNumberedKeySlot = optional
            } else {
                // A NULL key names no row: the object could be inserted, never found again.
                throw ActiveObjectError.invalidModel(
                    model: modelName,
                    reason: "the primary key column \"\(columns[optional].name)\" (property \(columns[optional].propertyName)) is optional: a NULL key names no row, so declare it non-optional (only a single INTEGER key may be optional: SQLite numbers it)")
            }
        }
        self.autoNumberedKeySlot = autoNumberedKeySlot
        for slot in keySlots.compactMap({ $0 }) where columns[slot].options.role != nil {
            throw ActiveObjectError.invalidModel(
                model: modelName,
                reason: "property \(columns[slot].propertyName) is part of the primary key and cannot have a role (.\(columns[slot].options.role!.rawValue))")
        }
        if declaresWithoutRowID, case .rowID = key {
            throw ActiveObjectError.invalidModel(
                model: modelName,
                reason: "a WITHOUT ROWID table needs a primary key of declared @Columns (primaryKey or primaryKeys)")
        }
        searchSlots = try Self.searchSlots(type.searchableColumns, of: columns, slots: slots, model: modelName,
                                           withoutRowID: declaresWithoutRowID, table: tableName)
        if slots["id"] == nil { slots["id"] = -1 }
        if case .rowID = key { slots[primaryKey] = -1 }
        self.columns = columns
        accessors = columns.map(\.accessor)
        slotByKey = slots
        slotByOffset = Dictionary(uniqueKeysWithValues: columns.indices.map { (columns[$0].accessor.valueOffset, $0) })
        canonicalSteps = columns.indices.map { LoadStep(column: Int32($0 + 1), slot: $0, accessor: columns[$0].accessor) }

        // The SQL, built once.
        quotedTable = SQLIdentifier.quote(tableName)
        let names = columns.map(\.quotedName)
        switch key {
        case .rowID(let column, _): quotedPrimaryKey = SQLIdentifier.quote(column)
        case .columns: quotedPrimaryKey = "\"rowid\""
        }
        declaredSQL = ModelSQL(table: quotedTable, columns: names, key: key, hasRowID: !declaresWithoutRowID, roles: roles)
        if case .columns = key, !declaresWithoutRowID {
            withoutRowIDSQL = ModelSQL(table: quotedTable, columns: names, key: key, hasRowID: false, roles: roles)
        } else if isReadOnly {
            withoutRowIDSQL = ModelSQL(table: quotedTable, columns: names, key: key, hasRowID: false, roles: roles)
        } else {
            withoutRowIDSQL = nil
        }
    }

    /// The role columns of `columns`, at most one per role.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` naming both properties of a
    ///   role given twice.
    private static func roles(of columns: [SchemaColumn], model: String) throws -> ModelRoles {
        var roles = ModelRoles()
        for (slot, column) in columns.enumerated() {
            guard let role = column.options.role else { continue }
            if let other = roles[role] {
                throw ActiveObjectError.invalidModel(
                    model: model,
                    reason: "properties \(columns[other].propertyName) and \(column.propertyName) both have the role .\(role.rawValue): a model has at most one column of each role")
            }
            roles[role] = slot
        }
        return roles
    }

    /// Refuses `renamedFrom` names that collide: with a column another property maps, with the
    /// primary key, or with another property's former name.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` naming the property.
    private static func checkRenames(of columns: [SchemaColumn], primaryKey: String, model: String) throws {
        var formerNames: [String: String] = [:]
        for column in columns {
            guard let old = column.options.renamedFrom else { continue }
            try SQLIdentifier.validate(old, what: "renamedFrom name of \(column.propertyName)", model: model)
            let folded = old.lowercased()
            if folded == column.name.lowercased() { continue }
            if let other = columns.first(where: { $0.name.lowercased() == folded }) {
                throw ActiveObjectError.invalidModel(
                    model: model,
                    reason: "property \(column.propertyName) is renamedFrom \"\(old)\", the column of property \(other.propertyName): a renamed column's old name must not be in use")
            }
            if folded == primaryKey.lowercased() {
                throw ActiveObjectError.invalidModel(
                    model: model,
                    reason: "property \(column.propertyName) is renamedFrom \"\(old)\", the primary key's name")
            }
            if let other = formerNames[folded] {
                throw ActiveObjectError.invalidModel(
                    model: model,
                    reason: "properties \(other) and \(column.propertyName) are both renamedFrom \"\(old)\"")
            }
            formerNames[folded] = column.propertyName
        }
    }

    /// The SQL for the table as it is in `database`: a natural-key model's table may be
    /// `WITHOUT ROWID` in a file another tool made, without the model saying so, or a view; a
    /// read-only rowid model may map a view that has no column for its key.
    @inline(__always)
    func sql(in database: Database) -> ModelSQL {
        guard let withoutRowIDSQL else { return declaredSQL }
        if case .rowID(let column, _) = key {
            return database.isViewWithoutColumn(tableName, column) ? withoutRowIDSQL : declaredSQL
        }
        return database.tableHasRowID(tableName) ? declaredSQL : withoutRowIDSQL
    }

    /// The slots of `names` (``ActiveObject/searchableColumns``).
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` for a name that is no column
    ///   of the model, a name given twice, a name FTS5 reserves, or a `WITHOUT ROWID` table.
    private static func searchSlots(_ names: [String], of columns: [SchemaColumn], slots: [String: Int],
                                    model: String, withoutRowID: Bool, table: String) throws -> [Int] {
        guard !names.isEmpty else { return [] }
        if withoutRowID {
            throw ActiveObjectError.invalidModel(
                model: model, reason: "searchableColumns needs a table with a rowid (the index refers to rows by it), and \(table) is WITHOUT ROWID")
        }
        var result: [Int] = []
        for name in names {
            guard let slot = slots[name] ?? columns.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw ActiveObjectError.invalidModel(
                    model: model, reason: "searchableColumns names \"\(name)\", which is not a @Column of the model")
            }
            let column = columns[slot].name.lowercased()
            if column == "rank" || column == "rowid" || column == SearchIndex.indexName(of: table).lowercased() {
                throw ActiveObjectError.invalidModel(
                    model: model, reason: "searchableColumns names \"\(name)\", a column name FTS5 reserves for itself: rename the column to search it")
            }
            guard !result.contains(slot) else {
                throw ActiveObjectError.invalidModel(
                    model: model, reason: "searchableColumns names the column \"\(columns[slot].name)\" twice")
            }
            result.append(slot)
        }
        return result
    }

    /// The slots of the key columns (empty for rowid models).
    var keySlots: [Int] {
        if case .columns(let slots) = key { return slots }
        return []
    }

    /// The one column other tables' foreign keys reference: the rowid column (slot -1) of rowid
    /// models, or the single key column. Nil for composite keys and hidden rowids.
    var referencedKey: (slot: Int, name: String)? {
        switch key {
        case .rowID(let column, let isHidden): return isHidden ? nil : (-1, column)
        case .columns(let slots): return slots.count == 1 ? (slots[0], columns[slots[0]].name) : nil
        }
    }

    // The SQL of the declared layout, for tests and diagnostics.
    var selectSQL: String { declaredSQL.selectSQL }
    var selectList: String { declaredSQL.selectList }

    /// A new, ordinary object of the model, for the library's own use (loading rows): not
    /// recorded even when it is created while a prototype is being built on this thread (a
    /// query in a prototype's `init()`). Costs one atomic load more than `init()`.
    func newObject() -> ActiveObject {
        PrototypeConstruction.suspended { modelType.init() }
    }

    /// The slot of a property or column name (`-1` for the primary key).
    /// - Throws: ``ActiveObjectError/unknownColumn(table:column:)``.
    func slot(forKey key: String) throws -> Int {
        guard let slot = slotByKey[key] else {
            throw ActiveObjectError.unknownColumn(table: tableName, column: key)
        }
        return slot
    }

    /// The quoted column for a property or column name.
    func quotedColumn(forKey key: String) throws -> String {
        quotedColumn(slot: try slot(forKey: key))
    }

    /// The quoted column of a slot (`-1`: the primary key).
    func quotedColumn(slot: Int) -> String {
        slot < 0 ? quotedPrimaryKey : columns[slot].quotedName
    }

    /// The quoted column of a slot in the SELECTs of `sql`, the model's SQL for the table as it
    /// is: `-1` (the key, `\.$id`) is `sql`'s id expression — `NULL` for a view without the key
    /// column or a `WITHOUT ROWID` file.
    func quotedColumn(slot: Int, in sql: ModelSQL) -> String {
        slot < 0 ? sql.idExpression : columns[slot].quotedName
    }

    /// The column name of a slot (`-1`: the primary key).
    func columnName(slot: Int) -> String {
        slot < 0 ? primaryKey : columns[slot].name
    }

    /// The slot a `\.$column` key path designates, read from the prototype (`-1` for `\.$id`).
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` when it designates no column.
    func slot(for keyPath: AnyKeyPath) throws -> Int {
        guard let reference = valueOnPrototype(at: keyPath) as? any ColumnPositionCarrier else {
            throw ActiveObjectError.invalidArgument("\(keyPath) does not designate a column of \(modelName)")
        }
        if reference.position == ColumnReference<Int64?>.primaryKeyPosition {
            if declaresWithoutRowID {
                throw ActiveObjectError.invalidArgument(
                    "\\.$id of \(modelName): its table is WITHOUT ROWID, so its rows have no id (name the key's columns instead)")
            }
            return -1
        }
        guard let slot = slotByOffset[reference.position] else {
            throw ActiveObjectError.invalidArgument("\(keyPath) does not designate a column of \(modelName)")
        }
        return slot
    }

    /// What `keyPath` gives on the prototype: a `\.$column` reference or a relation. One
    /// thread at a time, since a `$name` getter takes its property's address (recursive, for a
    /// relation property whose body evaluates another key path).
    func valueOnPrototype(at keyPath: AnyKeyPath) -> Any? {
        prototypeLock.withLock { prototype[keyPath: keyPath] }
    }

    /// The prototype's values — the columns' defaults — encoded for `context`. Under the same
    /// lock as key-path evaluations on the prototype, which make formal modify accesses to it.
    /// - Throws: what encoding a default throws (``ActiveObjectError/invalidValue(table:column:reason:)``).
    func defaultValues(context: ValueContext) throws -> [DatabaseValue] {
        try prototypeLock.withLock { try prototype.encodedValues(schema: self, context: context) }
    }

    /// The slot of a column key path that must be a declared `@Column` (not `\.$id`).
    func columnSlot(for keyPath: AnyKeyPath) throws -> Int {
        let slot = try slot(for: keyPath)
        guard slot >= 0 else {
            throw ActiveObjectError.invalidArgument("\(keyPath) is the primary key, not a declared column of \(modelName)")
        }
        return slot
    }

    /// The error of a write to a read-only model (``ActiveObject/isReadOnly``).
    func readOnlyError(_ operation: String) -> ActiveObjectError {
        .misuse("\(modelName) is read-only (isReadOnly), so \(operation) writes nothing: \(tableName) is a view or a table this app must not write")
    }

    /// The value context for this model in `database`.
    func context(in database: Database) -> ValueContext {
        ValueContext(dateStrategy: dateStrategy ?? database.options.dateStrategy)
    }
}

/// Implemented by ``ColumnReference`` so that a key path's target can be read untyped.
protocol ColumnPositionCarrier {
    var position: Int { get }
}

extension ColumnReference: ColumnPositionCarrier {}

/// Quoting and checking of SQL identifiers.
enum SQLIdentifier {
    /// `name` → `"name"`, with embedded quotes doubled: keywords (`order`, `group`) and any
    /// character are safe.
    static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Refuses names SQLite would misread: empty, or containing NUL.
    static func validate(_ name: String, what: String, model: String) throws {
        if name.isEmpty {
            throw ActiveObjectError.invalidModel(model: model, reason: "the \(what) is empty")
        }
        if name.utf8.contains(0) {
            throw ActiveObjectError.invalidModel(model: model, reason: "the \(what) contains a NUL character")
        }
    }
}
