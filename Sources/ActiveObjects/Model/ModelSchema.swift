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
    // Safety of @unchecked Sendable: every stored property is immutable after `init`, except
    // `updateStatements`, which is guarded by `lock`. The prototype object is never mutated
    // after `init` (only read, to evaluate `\.$column` key paths).

    let modelType: ActiveObject.Type
    let modelName: String
    let tableName: String
    let primaryKey: String
    let quotedTable: String
    let quotedPrimaryKey: String
    let columns: [SchemaColumn]
    /// The columns' accessors, by slot: the per-row loops index this array rather than copy
    /// `SchemaColumn`s (each copy retains and releases its strings).
    let accessors: [ColumnAccessor]
    /// The model's own date strategy override, if any.
    let dateStrategy: DateStrategy?
    /// A default-initialized instance; its wrappers carry their slots.
    let prototype: ActiveObject
    /// Slot for each property name and column name; `-1` for the primary key.
    private let slotByKey: [String: Int]

    /// How to load the model's own SELECTs, where slot `i` is result column `i + 1`.
    let canonicalSteps: [LoadStep]
    /// `"id", "name", "age"`.
    let selectList: String
    /// `SELECT "id", … FROM "person"`.
    let selectSQL: String
    let findByIDSQL: SharedSQL
    let insertSQL: SharedSQL
    let insertWithIDSQL: SharedSQL
    let upsertSQL: SharedSQL
    let upsertWithIDSQL: SharedSQL
    /// Insert with an id, or update every column of the row with that id (conflicts on the
    /// primary key only).
    let saveWholeRowSQL: SharedSQL
    let deleteByIDSQL: SharedSQL
    let existsByIDSQL: SharedSQL

    private let lock = NSLock()
    private var updateStatements: [[Int]: SharedSQL] = [:]

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
        primaryKey = type.primaryKey
        dateStrategy = type.dateStrategy
        try SQLIdentifier.validate(tableName, what: "table name", model: modelName)
        try SQLIdentifier.validate(primaryKey, what: "primary key", model: modelName)
        if tableName.lowercased().hasPrefix("sqlite_") {
            throw ActiveObjectError.invalidModel(model: modelName, reason: "table names starting with sqlite_ are reserved")
        }

        let (prototype, recorded) = build.makePrototype { type.init() }
        self.prototype = prototype
        let discovery = try ColumnDiscovery(prototype: prototype)
        try PrototypeColumnCheck.verify(prototype: prototype, recorded: recorded, discovery: discovery)
        let naming = type.columnNaming
        var columns: [SchemaColumn] = []
        var slots: [String: Int] = ["id": -1]
        slots[primaryKey] = -1
        var usedNames: [String: String] = [primaryKey.lowercased(): "the primary key"]
        for discovered in discovery.columns {
            let name = discovered.descriptor.options.name ?? naming.columnName(for: discovered.propertyName)
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
                                        options: discovered.descriptor.options, accessor: discovered.accessor))
            discovered.descriptor.slot = slot
        }
        self.columns = columns
        accessors = columns.map(\.accessor)
        slotByKey = slots
        canonicalSteps = columns.indices.map { LoadStep(column: Int32($0 + 1), slot: $0, accessor: columns[$0].accessor) }

        // The SQL, built once.
        quotedTable = SQLIdentifier.quote(tableName)
        quotedPrimaryKey = SQLIdentifier.quote(primaryKey)
        let names = columns.map(\.quotedName)
        selectList = ([quotedPrimaryKey] + names).joined(separator: ", ")
        selectSQL = "SELECT \(selectList) FROM \(quotedTable)"
        findByIDSQL = SharedSQL("\(selectSQL) WHERE \(quotedPrimaryKey) = ?")
        let table = quotedTable, key = quotedPrimaryKey
        let insert = Self.insertSQL(table: table, columns: names)
        let insertWithID = Self.insertSQL(table: table, columns: [key] + names)
        insertSQL = SharedSQL(insert)
        insertWithIDSQL = SharedSQL(insertWithID)
        // Upsert never uses REPLACE, which deletes the old row (and cascades).
        let assignments = names.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        let conflict = assignments.isEmpty
            ? "ON CONFLICT DO NOTHING"
            : "ON CONFLICT DO UPDATE SET \(assignments)"
        upsertSQL = SharedSQL("\(insert) \(conflict) RETURNING \(key)")
        upsertWithIDSQL = SharedSQL("\(insertWithID) \(conflict) RETURNING \(key)")
        saveWholeRowSQL = SharedSQL(assignments.isEmpty
            ? "\(insertWithID) ON CONFLICT(\(key)) DO NOTHING"
            : "\(insertWithID) ON CONFLICT(\(key)) DO UPDATE SET \(assignments)")
        deleteByIDSQL = SharedSQL("DELETE FROM \(table) WHERE \(key) = ?")
        existsByIDSQL = SharedSQL("SELECT 1 FROM \(table) WHERE \(key) = ?")
    }

    private static func insertSQL(table: String, columns: [String]) -> String {
        if columns.isEmpty { return "INSERT INTO \(table) DEFAULT VALUES" }
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(marks))"
    }

    /// `UPDATE "t" SET "a" = ?, "b" = ? WHERE "id" = ?` for the given slots, cached.
    func updateSQL(slots: [Int]) -> SharedSQL {
        lock.lock()
        defer { lock.unlock() }
        if let sql = updateStatements[slots] { return sql }
        let assignments = slots.map { "\(columns[$0].quotedName) = ?" }.joined(separator: ", ")
        let sql = SharedSQL("UPDATE \(quotedTable) SET \(assignments) WHERE \(quotedPrimaryKey) = ?")
        if updateStatements.count < 256 { updateStatements[slots] = sql }
        return sql
    }

    /// A new, ordinary object of the model, for the library's own use (loading rows): its
    /// wrappers are `.fresh` even when it is created while a prototype is being built on this
    /// thread (a query in a prototype's `init()`). Costs one atomic load more than `init()`.
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

    /// The column name of a slot (`-1`: the primary key).
    func columnName(slot: Int) -> String {
        slot < 0 ? primaryKey : columns[slot].name
    }

    /// The slot a `\.$column` key path designates, read from the prototype (`-1` for `\.$id`).
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` when it designates no column.
    func slot(for keyPath: AnyKeyPath) throws -> Int {
        guard let reference = prototype[keyPath: keyPath] as? any ColumnSlotCarrier,
              reference.slot == ColumnReference<Int64?>.primaryKeySlot || columns.indices.contains(reference.slot) else {
            throw ActiveObjectError.invalidArgument("\(keyPath) does not designate a column of \(modelName)")
        }
        return reference.slot
    }

    /// The slot of a column key path that must be a declared `@Column` (not `\.$id`).
    func columnSlot(for keyPath: AnyKeyPath) throws -> Int {
        let slot = try slot(for: keyPath)
        guard slot >= 0 else {
            throw ActiveObjectError.invalidArgument("\(keyPath) is the primary key, not a declared column of \(modelName)")
        }
        return slot
    }

    /// The value context for this model in `database`.
    func context(in database: Database) -> ValueContext {
        ValueContext(dateStrategy: dateStrategy ?? database.options.dateStrategy)
    }
}

/// Implemented by ``ColumnReference`` so that a key path's target can be read untyped.
protocol ColumnSlotCarrier {
    var slot: Int { get }
}

extension ColumnReference: ColumnSlotCarrier {}

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
