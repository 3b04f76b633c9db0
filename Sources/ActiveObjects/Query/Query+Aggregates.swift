extension Query {
    /// Runs `function(column)` over the matching rows; returns the value, the context and the
    /// column name (for errors).
    func aggregate(_ function: String, _ column: AnyKeyPath) throws -> (DatabaseValue, ValueContext, String) {
        let compiled = try compile()
        let schema = compiled.schema
        let slot = try schema.slot(for: column)
        let quoted = schema.quotedColumn(slot: slot)
        let source = compiled.limitClause.isEmpty
            ? "\(schema.quotedTable)\(compiled.whereClause)"
            : "(SELECT \(quoted) FROM \(schema.quotedTable)\(compiled.tail))"
        let sql = "SELECT \(function)(\(quoted)) FROM \(source)"
        let value = try compiled.database.withReader { try $0.scalarValue(sql, compiled.tailArguments) } ?? .null
        return (value, compiled.context, schema.columnName(slot: slot))
    }

    func typed<V: ColumnValue>(_ result: (DatabaseValue, ValueContext, String), as type: V.Type) throws -> V? {
        let (value, context, column) = result
        if value.isNull { return nil }
        guard let typed = V.fromDatabaseValue(value, in: context) else {
            throw ActiveObjectError.typeMismatch(table: Model.tableName, column: column, rowID: nil,
                                                 expected: String(describing: V.self), found: value.description)
        }
        return typed
    }

    /// The sum of a numeric column over the matching rows (0 when none match).
    /// - Throws: as ``all()``; ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)``
    ///   when the sum does not fit `V` (e.g. a REAL sum of an `Int` column holding REALs).
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> V {
        try typed(aggregate("sum", column), as: V.self) ?? .zero
    }

    /// The sum of an optional numeric column (NULLs ignored; 0 when none match).
    /// - Throws: as ``sum(_:)-(KeyPath<Model,ColumnReference<V>>)``.
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) throws -> V {
        try typed(aggregate("sum", column), as: V.self) ?? .zero
    }

    /// The smallest value of a column, or nil when no row matches.
    /// - Throws: as ``all()``.
    public func min<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> V? {
        try typed(aggregate("min", column), as: V.self)
    }

    /// The largest value of a column, or nil when no row matches.
    /// - Throws: as ``all()``.
    public func max<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> V? {
        try typed(aggregate("max", column), as: V.self)
    }

    /// The mean of a numeric column, or nil when no row matches. Only numeric columns
    /// (`Int`, `Double`, `Decimal`, …) compile: SQLite would average text as 0.
    /// - Throws: as ``all()``.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> Double? {
        try typed(aggregate("avg", column), as: Double.self)
    }

    /// The mean of an optional numeric column (NULLs ignored), or nil when no row has a value.
    /// - Throws: as ``all()``.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) throws -> Double? {
        try typed(aggregate("avg", column), as: Double.self)
    }
}
