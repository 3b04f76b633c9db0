import Foundation

/// An aggregate of a column: computed by SQLite, except for `Decimal` columns, which are
/// stored as exact text — SQLite would add them as floating point and compare them as text
/// (`"100.5" < "20"`) — and are therefore folded in Swift, exactly.
/// One group's aggregate, as stored values: the group's value, the aggregate, and (for an
/// average) how many values it averages.
struct AggregateRow {
    let group: DatabaseValue
    let value: DatabaseValue
    let weight: Int64
}

enum Aggregate {
    case sum, min, max, average

    var sqlFunction: String {
        switch self {
        case .sum: return "sum"
        case .min: return "min"
        case .max: return "max"
        case .average: return "avg"
        }
    }
}

extension Query {
    /// One aggregate per group (one group, keyed NULL, when `group` is nil): the group's value
    /// and the aggregate, as stored values. Groups are the distinct values of the `group`
    /// column, NULL included.
    /// - Throws: as ``all()``; `typeMismatch` for a `Decimal` column holding a non-number.
    func aggregates(_ aggregate: Aggregate?, of column: AnyKeyPath?, by group: AnyKeyPath?)
        throws -> (rows: [AggregateRow], context: ValueContext, column: String) {
        let compiled = try compile()
        let schema = compiled.schema
        let valueSlot = try column.map { try schema.slot(for: $0) }
        let groupSlot = try group.map { try schema.slot(for: $0) }
        let valueColumn = valueSlot.map { compiled.quotedColumn(slot: $0) }
        let keyColumn = groupSlot.map { compiled.quotedColumn(slot: $0) }
        let columnName = valueSlot.map { schema.columnName(slot: $0) } ?? "count"
        let exact = valueSlot.map { $0 >= 0 && schema.accessors[$0].holdsDecimal } ?? false
        // With a limit, the limited rows come from a subquery that names the two columns it
        // passes on (`SELECT *` would drop a rowid key: `max(\.$id)` of a keyless table).
        let limited = !compiled.limitClause.isEmpty
        let source = limited
            ? "(SELECT \(keyColumn ?? "NULL") AS \"_g\", \(valueColumn ?? "NULL") AS \"_v\" FROM \(compiled.source)\(compiled.tail))"
            : "\(compiled.source)\(compiled.whereClause)"
        let key = limited ? keyColumn.map { _ in "\"_g\"" } : keyColumn
        let value = limited ? valueColumn.map { _ in "\"_v\"" } : valueColumn
        let groupBy = key.map { " GROUP BY \($0)" } ?? ""
        let selected: String
        if aggregate == .average, key != nil, let value {
            // Grouped averages come with their weights: groups whose stored keys read as one
            // Swift key are merged by the caller.
            selected = "avg(\(value)), count(\(value))"
        } else if let aggregate, let value, !(exact && aggregate != .average) {
            selected = "\(aggregate.sqlFunction)(\(value))"
        } else if let value {
            selected = value   // folded in Swift below, row by row
        } else {
            selected = "count(*)"
        }
        let folds = exact && aggregate != nil && aggregate != .average
        let sql = "SELECT \(key ?? "NULL"), \(selected) FROM \(source)\(folds ? "" : groupBy)"
        let weighted = aggregate == .average && key != nil && value != nil
        let rows: [AggregateRow] = try compiled.database.withAccess(.read) { access in
            try access.connection.withStatement(sql, compiled.tailArguments) { statement in
                var rows: [AggregateRow] = []
                while try statement.step() {
                    var weight: Int64 = 1
                    if weighted, case .integer(let count) = statement.value(at: 2) { weight = count }
                    rows.append(AggregateRow(group: statement.value(at: 0), value: statement.value(at: 1), weight: weight))
                }
                return rows
            }
        }
        guard folds, let aggregate else { return (rows, compiled.context, columnName) }
        return (try Self.foldDecimals(rows, aggregate, table: schema.tableName, column: columnName, context: compiled.context),
                compiled.context, columnName)
    }

    /// Sums, minimums or maximums of `Decimal` values per group, exactly.
    static func foldDecimals(_ rows: [AggregateRow], _ aggregate: Aggregate, table: String,
                             column: String, context: ValueContext) throws -> [AggregateRow] {
        var order: [DatabaseValue] = []
        var seen = Set<DatabaseValue>()
        var folded: [DatabaseValue: Decimal] = [:]
        for row in rows {
            let (group, stored) = (row.group, row.value)
            if seen.insert(group).inserted { order.append(group) }
            guard !stored.isNull else { continue }
            guard let decimal = Decimal.fromDatabaseValue(stored, in: context) else {
                throw ActiveObjectError.typeMismatch(table: table, column: column, rowID: nil,
                                                     expected: "Decimal", found: stored.description)
            }
            guard let current = folded[group] else {
                folded[group] = decimal
                continue
            }
            switch aggregate {
            case .sum: folded[group] = current + decimal
            case .min: folded[group] = Swift.min(current, decimal)
            case .max: folded[group] = Swift.max(current, decimal)
            case .average: break
            }
        }
        return try order.map { group in
            AggregateRow(group: group, value: try folded[group].map { try $0.databaseValue(in: context) } ?? .null, weight: 1)
        }
    }

    /// One aggregate over every matching row.
    func aggregate(_ aggregate: Aggregate, _ column: AnyKeyPath) throws -> (DatabaseValue, ValueContext, String) {
        let (rows, context, name) = try aggregates(aggregate, of: column, by: nil)
        return (rows.first?.value ?? .null, context, name)
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

    /// The sum of a numeric column over the matching rows (0 when none match). `Decimal`
    /// columns are summed exactly.
    /// - Throws: as ``all()-2jzog``;
    ///   ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)`` when the sum
    ///   does not fit `V` (e.g. a REAL sum of an `Int` column holding REALs).
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> V {
        try typed(aggregate(.sum, column), as: V.self) ?? .zero
    }

    /// The sum of an optional numeric column (NULLs ignored; 0 when none match).
    /// - Throws: as ``sum(_:)``.
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) throws -> V {
        try typed(aggregate(.sum, column), as: V.self) ?? .zero
    }

    /// The smallest value of a column, or nil when no row matches (`Decimal`s compared as numbers).
    /// - Throws: as ``all()-2jzog``.
    public func min<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> V? {
        try typed(aggregate(.min, column), as: V.self)
    }

    /// The largest value of a column, or nil when no row matches (`Decimal`s compared as numbers).
    /// - Throws: as ``all()-2jzog``.
    public func max<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> V? {
        try typed(aggregate(.max, column), as: V.self)
    }

    /// The mean of a numeric column, or nil when no row matches. Only numeric columns
    /// (`Int`, `Double`, `Decimal`, …) compile: SQLite would average text as 0.
    /// - Throws: as ``all()-2jzog``.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> Double? {
        try typed(aggregate(.average, column), as: Double.self)
    }

    /// The mean of an optional numeric column (NULLs ignored), or nil when no row has a value.
    /// - Throws: as ``all()-2jzog``.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) throws -> Double? {
        try typed(aggregate(.average, column), as: Double.self)
    }
}
