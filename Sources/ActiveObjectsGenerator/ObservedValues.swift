/// What a column of a database holds: the kinds of values SQLite stores in it, and whether
/// any of them is one that a Swift type of ``SwiftType`` would refuse to read.
///
/// Read by ``SchemaReader`` in one pass over each table and view (a handful of aggregates per
/// column, computed by SQLite), whether the schema is a database file or a script whose
/// `INSERT`s ran. It decides two things:
/// - the type of a view column that is an expression (`sum(…)`, `a || b`): SQLite gives it no
///   declared type, so the values say what it is (``inferredType``);
/// - whether the values fit the type a declared type maps to (``accepts(_:)``): a column
///   declared `DATETIME` holding text that is not a date, `INTEGER` holding `1.5`, `TEXT`
///   holding a BLOB. Such a column gets the next type that reads every value (see
///   ``TypeMapping/fitting(_:observed:)``), so that every row of the file loads.
///
/// The checks follow the library's conversions (`ColumnValue.fromDatabaseValue`) closely but in
/// SQL; where they differ, they refuse values the library would read (an integer written
/// `+5`, a date with a `±HHMM` offset), never the reverse: the fallback type reads those too.
struct ObservedValues: Equatable {
    /// The number of rows of the table or view.
    var rowCount: Int
    var hasInteger = false
    var hasReal = false
    var hasText = false
    var hasBlob = false
    var hasNull = false
    /// A REAL with a fraction (`1.5`): not an `Int`.
    var hasFractionalReal = false
    /// An INTEGER beyond ±2^53: not a `Double` exactly.
    var hasHugeInteger = false
    /// A number other than 0 and 1: not a `Bool`.
    var hasNonBinaryNumber = false
    /// Text that does not spell an integer: not an `Int`.
    var hasNonIntegerText = false
    /// Text that does not spell a number: not a `Double` or `Decimal`.
    var hasNonNumericText = false
    /// Text that is not a date of the forms the library reads: not a `Date`.
    var hasNonDateText = false
    /// Text that is not a UUID: not a `UUID`.
    var hasNonUUIDText = false
    /// Text other than `0` and `1`: not a `Bool`.
    var hasNonBinaryText = false
    /// A BLOB that is not 16 bytes: not a `UUID`.
    var hasNon16ByteBlob = false

    /// Whether the column holds any non-NULL value.
    var hasValues: Bool { hasInteger || hasReal || hasText || hasBlob }

    /// The SQL aggregates for `column` (quoted), in the order of the flags above after
    /// `rowCount`; each is 1 when some row has such a value, 0 or NULL when none does.
    static func aggregates(of column: String) -> [String] {
        let c = column
        let digits = "[0-9][0-9][0-9][0-9]"
        let isoDate = "\(c) GLOB '\(digits)-[0-9][0-9]-[0-9][0-9]*' AND julianday(\(c)) IS NOT NULL"
        let compactDate = "\(c) GLOB '\(digits)[0-9][0-9][0-9][0-9]' OR \(c) GLOB '\(digits)[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]'"
        let hex = "[0-9a-fA-F]"
        let uuid = "length(\(c)) = 36 AND \(c) GLOB '\(String(repeating: hex, count: 8))-\(String(repeating: hex, count: 4))-*'"
        return [
            "max(typeof(\(c)) = 'integer')",
            "max(typeof(\(c)) = 'real')",
            "max(typeof(\(c)) = 'text')",
            "max(typeof(\(c)) = 'blob')",
            "max(\(c) IS NULL)",
            "max(typeof(\(c)) = 'real' AND \(c) <> CAST(\(c) AS INTEGER))",
            "max(typeof(\(c)) = 'integer' AND (\(c) > 9007199254740992 OR \(c) < -9007199254740992))",
            "max(typeof(\(c)) IN ('integer', 'real') AND \(c) NOT IN (0, 1))",
            "max(typeof(\(c)) = 'text' AND CAST(CAST(\(c) AS INTEGER) AS TEXT) IS NOT \(c))",
            "max(typeof(\(c)) = 'text' AND (\(c) NOT GLOB '*[0-9]*' OR \(c) GLOB '*[^0-9.eE+-]*'))",
            "max(typeof(\(c)) = 'text' AND NOT ((\(isoDate)) OR \(compactDate)))",
            "max(typeof(\(c)) = 'text' AND NOT (\(uuid)))",
            "max(typeof(\(c)) = 'text' AND \(c) NOT IN ('0', '1'))",
            "max(typeof(\(c)) = 'blob' AND length(\(c)) <> 16)",
        ]
    }

    /// How many aggregates ``aggregates(of:)`` gives per column.
    static let aggregateCount = 14

    /// The flags from the values of ``aggregates(of:)``.
    init(rowCount: Int, aggregates values: [Int?]) {
        self.rowCount = rowCount
        let flags = values.map { ($0 ?? 0) != 0 }
        hasInteger = flags[0]
        hasReal = flags[1]
        hasText = flags[2]
        hasBlob = flags[3]
        hasNull = flags[4]
        hasFractionalReal = flags[5]
        hasHugeInteger = flags[6]
        hasNonBinaryNumber = flags[7]
        hasNonIntegerText = flags[8]
        hasNonNumericText = flags[9]
        hasNonDateText = flags[10]
        hasNonUUIDText = flags[11]
        hasNonBinaryText = flags[12]
        hasNon16ByteBlob = flags[13]
    }

    init(rowCount: Int) { self.rowCount = rowCount }

    /// Whether a property of `type` reads every value of the column (NULL aside: optionality
    /// is the declared `NOT NULL`'s business, which SQLite enforces).
    func accepts(_ type: SwiftType) -> Bool {
        switch type {
        case .int, .int64: return !hasBlob && !hasFractionalReal && !hasNonIntegerText
        case .double: return !hasBlob && !hasHugeInteger && !hasNonNumericText
        case .decimal: return !hasBlob && !hasNonNumericText
        case .string: return !hasBlob
        case .data: return !hasInteger && !hasReal
        case .date: return !hasBlob && !hasNonDateText
        case .bool: return !hasBlob && !hasNonBinaryNumber && !hasNonBinaryText
        case .uuid: return !hasInteger && !hasReal && !hasNonUUIDText && !hasNon16ByteBlob
        }
    }

    /// The type of a column SQLite declares no type for (a view's expression), from its
    /// values: `Int` for integers only, `Double` for numbers with a REAL among them, `String`
    /// for text (`String` reads numbers too), `Data` for BLOBs (and text). Nil when the column
    /// holds no value to go by, or BLOBs beside numbers (no type reads both).
    var inferredType: SwiftType? {
        if hasBlob { return hasInteger || hasReal ? nil : .data }
        if hasText { return .string }
        if hasReal { return hasHugeInteger ? .decimal : .double }
        if hasInteger { return .int }
        return nil
    }

    /// The kinds of values present, for comments: `INTEGER and REAL values`.
    var kinds: String {
        let names = [(hasInteger, "INTEGER"), (hasReal, "REAL"), (hasText, "TEXT"), (hasBlob, "BLOB")]
            .filter(\.0).map(\.1)
        switch names.count {
        case 0: return "no values"
        case 1: return "\(names[0]) values"
        default: return names.dropLast().joined(separator: ", ") + " and \(names.last!) values"
        }
    }
}
