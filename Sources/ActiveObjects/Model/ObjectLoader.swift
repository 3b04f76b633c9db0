/// One column to copy from a result row into an object: plain values only, so that the
/// per-row loop touches no reference counts.
struct LoadStep {
    /// The result column.
    let column: Int32
    /// The schema slot (for the accessor and error messages).
    let slot: Int
    let nativeType: NativeType
    let valueOffset: Int

    init(column: Int32, slot: Int, accessor: ColumnAccessor) {
        self.column = column
        self.slot = slot
        nativeType = accessor.nativeType
        valueOffset = accessor.valueOffset
    }
}

/// Turns result rows into model objects: maps result columns to schema slots by name once
/// per statement, then fills each new object straight from the statement.
struct ObjectLoader {
    let schema: ModelSchema
    let context: ValueContext
    private let idColumn: Int32?
    /// Whether the result holds the model's key (a natural key's columns, or the rowid of a
    /// rowid model): objects loaded without it are `keyless`.
    private let hasKey: Bool
    /// A step for every model column present in the result.
    private let steps: [LoadStep]

    /// A loader for the model's own `SELECT "id", <columns in slot order> FROM …` statements,
    /// whose layout is fixed by the SQL text itself: no name lookup per query.
    init(canonicalFor schema: ModelSchema, context: ValueContext) {
        self.schema = schema
        self.context = context
        idColumn = 0
        hasKey = true
        steps = schema.canonicalSteps
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
        switch schema.key {
        case .rowID(let column, _):
            idColumn = positions[column.lowercased()] ?? (column.lowercased() == "id" ? nil : positions["rowid"])
        case .columns:
            idColumn = positions["rowid"]
        }
        let keyNames = schema.keySlots.map { schema.columns[$0].name.lowercased() }
        hasKey = keyNames.allSatisfy { positions[$0] != nil }
        var steps: [LoadStep] = []
        for (slot, column) in schema.columns.enumerated() {
            if let position = positions[column.name.lowercased()] {
                steps.append(LoadStep(column: position, slot: slot, accessor: column.accessor))
            }
        }
        self.steps = steps
    }

    /// A new object holding the current row. A model column missing from the result keeps the
    /// property's default, and counts as unchanged: `save()` writes only the columns assigned
    /// since, and writes of the whole row (`insert()`, `upsert()`, a changed `id`, a deleted
    /// object) are refused, since they would store those defaults.
    ///
    /// - Throws: ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)`` naming
    ///   the table, column and row id of a value that does not fit its property.
    func load(from statement: Statement) throws -> ActiveObject {
        let object = schema.newObject()
        try fill(object, from: statement)
        object.didLoad()
        return object
    }

    /// Steps `statement` and loads each row into a new object, up to `limit` rows (all of them
    /// by default). Not generic: the callers cast the whole array once
    /// (``Swift/Array/unsafelyCast(to:)``) rather than append to an array of a generic model,
    /// which asks the runtime for that array type's metadata on every append.
    func loadRows(from statement: Statement, limit: Int = .max) throws -> [ActiveObject] {
        var objects: [ActiveObject] = []
        while objects.count < limit, try statement.step() {
            objects.append(try load(from: statement))
        }
        return objects
    }

    /// Stores the current row into `object` (its id and every mapped column) and marks it as
    /// holding its row — or as `keyless` when the result has no primary key value, so that
    /// `save()` refuses it rather than inserting a duplicate. Property observers (`didSet`) do
    /// not run, and neither do Observation's: `reload()` fills a scratch object, then copies
    /// it with notifications (``ActiveObject/takeRow(of:schema:)``).
    func fill(_ object: ActiveObject, from statement: Statement) throws {
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
        // No closure here: the caller keeps the object alive, and the loop stays free of
        // captured state and reference counting.
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        for step in steps {
            // The common case: the statement writes the native value in place.
            if !statement.store(column: step.column, as: step.nativeType, at: base + step.valueOffset) {
                // Any other case converts through ColumnValue, which also detects mismatches.
                let value = statement.value(at: step.column)
                let accessor = schema.accessors[step.slot]
                guard accessor.load(value, into: base, context: context) else {
                    throw ActiveObjectError.typeMismatch(
                        table: schema.tableName, column: schema.columns[step.slot].name, rowID: rowID,
                        expected: accessor.valueTypeName, found: value.description)
                }
            }
        }
        // Columns missing from the result keep their defaults, yet are tracked from now on:
        // assigning one later writes it.
        object.markLoaded(rowID: rowID, state: state(rowID: rowID))
        object.isPartiallyLoaded = steps.count != schema.accessors.count
    }

    /// A loaded object's state: it holds its row when the result named it.
    private func state(rowID: Int64?) -> RecordState {
        switch schema.key {
        case .rowID: return rowID == nil ? .keyless : .persisted
        case .columns: return hasKey ? .persisted : .keyless
        }
    }

    /// Stores a row read elsewhere (in the canonical layout: the key, then the columns in
    /// slot order) into `object`, as ``fill(_:from:)`` does from a statement. Used by
    /// async `reload()`, which reads on a background thread and fills on the caller's.
    /// - Throws: ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)``.
    func fill(_ object: ActiveObject, row: [DatabaseValue]) throws {
        let rowID: Int64?
        switch row.first ?? .null {
        case .integer(let id): rowID = id
        case .null: rowID = nil
        case let other:
            throw ActiveObjectError.typeMismatch(table: schema.tableName, column: schema.primaryKey, rowID: nil,
                                                 expected: "Int64", found: other.description)
        }
        try object.withUnsafeObjectPointer { base in
            for (slot, accessor) in schema.accessors.enumerated() {
                let value = slot + 1 < row.count ? row[slot + 1] : .null
                guard accessor.load(value, into: base, context: context) else {
                    throw ActiveObjectError.typeMismatch(
                        table: schema.tableName, column: schema.columns[slot].name, rowID: rowID,
                        expected: accessor.valueTypeName, found: value.description)
                }
            }
        }
        object.markLoaded(rowID: rowID, state: state(rowID: rowID))
        object.isPartiallyLoaded = false
    }
}

extension Array where Element == ActiveObject {
    /// The objects as an array of `Model`, without visiting them. Only for objects loaded
    /// through `Model`'s own schema (``ModelSchema/newObject()`` creates exactly `Model`s): an
    /// array of a class holds the same references in the same layout whatever its static
    /// element type, so the array is reinterpreted, as Swift itself does for an upcast.
    func unsafelyCast<Model: ActiveObject>(to model: Model.Type) -> [Model] {
        assert(allSatisfy { $0 is Model }, "an object of another class among \(Model.self)s")
        return unsafeBitCast(self, to: [Model].self)
    }
}
