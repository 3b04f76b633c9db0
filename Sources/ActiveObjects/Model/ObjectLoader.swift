/// Turns result rows into model objects: maps result columns to schema slots by name once
/// per statement, then fills each new object straight from the statement.
struct ObjectLoader {
    let schema: ModelSchema
    let context: ValueContext
    private let idColumn: Int32?
    /// (slot, result column) for every model column present in the result.
    private let mapping: [(slot: Int, column: Int32)]

    /// A loader for the model's own `SELECT "id", <columns in slot order> FROM …` statements,
    /// whose layout is fixed by the SQL text itself: no name lookup per query.
    init(canonicalFor schema: ModelSchema, context: ValueContext) {
        self.schema = schema
        self.context = context
        idColumn = 0
        mapping = schema.canonicalMapping
    }

    /// Matches the statement's result columns (case-insensitively, first match wins) to the
    /// primary key and the model's columns. Extra result columns are ignored.
    init(schema: ModelSchema, statement: Statement, context: ValueContext) {
        self.schema = schema
        self.context = context
        var positions: [String: Int32] = [:]
        for index in (0..<statement.columnCount).reversed() {
            positions[statement.columnName(index).lowercased()] = index
        }
        idColumn = positions[schema.primaryKey.lowercased()]
        var mapping: [(slot: Int, column: Int32)] = []
        for (slot, column) in schema.columns.enumerated() {
            if let position = positions[column.name.lowercased()] { mapping.append((slot, position)) }
        }
        self.mapping = mapping
    }

    /// A new object holding the current row. A model column missing from the result keeps the
    /// property's default, and counts as unchanged (it is not written back by `save()`).
    ///
    /// - Throws: ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)`` naming
    ///   the table, column and row id of a value that does not fit its property.
    func load(from statement: Statement) throws -> ActiveObject {
        let object = schema.modelType.init()
        try fill(object, from: statement, isNew: true)
        return object
    }

    /// Stores the current row into `object` (its id and every mapped column) and marks it as
    /// holding its row.
    func fill(_ object: ActiveObject, from statement: Statement, isNew: Bool = false) throws {
        var rowID: Int64?
        if let idColumn {
            switch statement.value(at: idColumn) {
            case .integer(let id): rowID = id
            case .null: rowID = nil
            case let other:
                throw ActiveObjectError.typeMismatch(
                    table: schema.tableName, column: schema.primaryKey, rowID: nil,
                    expected: "Int64", found: other.description)
            }
        }
        let accessors = schema.accessors
        // No closure here: the caller keeps the object alive, and the loop stays free of
        // captured state.
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        for (slot, column) in mapping {
            let value = statement.value(at: column)
            let accessor = accessors[slot]
            guard accessor.load(value, into: base, context: context) else {
                throw ActiveObjectError.typeMismatch(
                    table: schema.tableName, column: schema.columns[slot].name, rowID: rowID,
                    expected: accessor.valueTypeName, found: value.description)
            }
            if isNew { accessor.markLoaded(inNewObject: base) } else { accessor.setState(.clean, in: base) }
        }
        if mapping.count != accessors.count {
            // Columns missing from the result keep their defaults, yet are tracked from now on:
            // assigning one later writes it.
            for accessor in accessors { accessor.setState(.clean, in: base) }
        }
        object.id = rowID
        object.isPersisted = true
    }
}
