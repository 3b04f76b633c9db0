import Foundation

/// What synchronization accepts of one model's rows: its table, key, and columns with their
/// types. The hub checks every pushed row with it; a device checks its own rows with it before
/// pushing, so that a row the hub would refuse is set aside instead of stopping every push.
struct SyncModel: Sendable {
    struct Column: Sendable {
        var type: ColumnType
        var isNullable: Bool
        /// Dates are stored as text, seconds or milliseconds by each database's date strategy:
        /// any of them is accepted.
        var isDate: Bool

        /// Why `value` cannot be stored in this column, or nil.
        func problem(with value: DatabaseValue) -> String? {
            switch value {
            case .null: return isNullable ? nil : "is NULL in a non-optional column"
            // BLOB columns also hold values stored as they come (`DatabaseValue` properties).
            case .integer: return type == .integer || type == .real || type == .blob || isDate ? nil : "is not \(type.rawValue)"
            case .real: return type == .real || type == .blob || isDate ? nil : "is not \(type.rawValue)"
            case .text: return type == .text || type == .blob || isDate ? nil : "is not \(type.rawValue)"
            case .blob: return type == .blob ? nil : "is not \(type.rawValue)"
            }
        }
    }

    var name: String
    var table: String
    var keyColumn: String
    /// The declared columns other than the key, by name.
    var columns: [String: Column]

    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` for a model that cannot be synchronized.
    init(_ model: ActiveObject.Type, in database: Database) throws {
        let schema = try ModelSchema.of(model)
        let key = try SyncCapture.keyColumn(of: schema)
        name = schema.modelName
        table = schema.tableName
        keyColumn = key.name
        let dateStrategy = schema.context(in: database).dateStrategy
        var columns: [String: Column] = [:]
        for column in schema.columns where column.name != key.name {
            columns[column.name] = Column(type: column.columnType(dateStrategy: dateStrategy),
                                          isNullable: column.isNullable, isDate: column.accessor.isDate)
        }
        self.columns = columns
    }

    /// Why the hub would refuse `row` of this model (a key that is not text, a column it does
    /// not know, a value the column cannot hold), or nil. With `knownColumnsOnly` (a device
    /// checking its own row), columns this model lacks are not checked: they came from the
    /// hub, which knows them.
    func problem(with row: SyncRow, knownColumnsOnly: Bool = false) -> String? {
        guard case .text = row.key else {
            return "a row of \(table) has the key \(row.key); keys are text (UUIDs or strings)"
        }
        for (column, field) in row.fields {
            if SyncProtocol.isRowStateField(column) {
                if field.value != .null { return "the \"\(column)\" stamp of row \(row.key) of \(table) carries a value" }
                continue
            }
            guard let accepted = columns[column] else {
                if knownColumnsOnly { continue }
                return "\(name) (table \(table)) has no column \"\(column)\""
            }
            if let problem = accepted.problem(with: field.value) {
                return "the value \(field.value) of \(table).\(column) (row \(row.key)) \(problem)"
            }
        }
        return nil
    }
}
