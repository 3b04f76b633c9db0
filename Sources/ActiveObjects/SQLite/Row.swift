/// The column names of a result set, shared by all its rows.
final class RowColumns: Sendable {
    let names: [String]
    private let indexByName: [String: Int]

    init(names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        // SQLite column names are case-insensitive; the first of duplicate names wins.
        for (position, name) in names.enumerated().reversed() {
            index[name.lowercased()] = position
        }
        indexByName = index
    }

    func index(of name: String) -> Int? {
        if let exact = names.firstIndex(of: name) { return exact }
        return indexByName[name.lowercased()]
    }
}

/// One row of a raw query, with typed, throwing access by column name or index.
///
/// ```swift
/// let rows = try db.rows("SELECT name, age FROM person WHERE age > ?", [30])
/// let name: String = try rows[0]["name"]
/// let age: Int = try rows[0][1]
/// ```
/// A value that does not fit the requested type throws
/// ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)``; an unknown column
/// name throws ``ActiveObjectError/unknownColumn(table:column:)``.
public struct Row: Sendable, CustomStringConvertible {
    let columns: RowColumns
    /// The raw values, in column order.
    public let values: [DatabaseValue]
    let context: ValueContext

    init(columns: RowColumns, values: [DatabaseValue], context: ValueContext) {
        self.columns = columns
        self.values = values
        self.context = context
    }

    /// The column names, in order.
    public var columnNames: [String] { columns.names }

    /// The number of columns.
    public var count: Int { values.count }

    /// The value of the named column (case-insensitive), converted to `T`.
    /// - Throws: `unknownColumn` or `typeMismatch`.
    public subscript<T: ColumnValue>(_ column: String) -> T {
        get throws {
            guard let index = columns.index(of: column) else {
                throw ActiveObjectError.unknownColumn(table: "(query result)", column: column)
            }
            return try convert(values[index], column: column)
        }
    }

    /// The value at a 0-based column index, converted to `T`.
    /// - Throws: `invalidArgument` for an index out of range, or `typeMismatch`.
    public subscript<T: ColumnValue>(_ index: Int) -> T {
        get throws {
            guard values.indices.contains(index) else {
                throw ActiveObjectError.invalidArgument("column index \(index) is out of range 0..<\(values.count)")
            }
            return try convert(values[index], column: columns.names[index])
        }
    }

    /// Whether the row has a column with this name (case-insensitive).
    public func hasColumn(_ name: String) -> Bool { columns.index(of: name) != nil }

    private func convert<T: ColumnValue>(_ value: DatabaseValue, column: String) throws -> T {
        guard let converted = T.fromDatabaseValue(value, in: context) else {
            throw ActiveObjectError.typeMismatch(
                table: "(query result)", column: column, rowID: nil,
                expected: String(describing: T.self), found: value.description)
        }
        return converted
    }

    /// `[name: value, …]` in column order.
    public var description: String {
        "[" + zip(columns.names, values).map { "\($0): \($1)" }.joined(separator: ", ") + "]"
    }
}
