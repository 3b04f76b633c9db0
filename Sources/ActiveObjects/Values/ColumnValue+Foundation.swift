import Foundation

extension Date: ColumnValue {
    /// The default declared type, for the default `.iso8601Text` strategy. Schema creation
    /// uses the strategy in force for the model instead.
    public static var columnType: ColumnType { .text }
    /// The date in the context's ``DateStrategy``.
    /// - Throws: ``ColumnValueError`` for dates that the strategy cannot write (e.g. year 10000 as text).
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue {
        try context.dateStrategy.encode(self)
    }
    /// Accepts every text form and number that ``DateStrategy`` reads.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> Date? {
        context.dateStrategy.decode(value)
    }
}

extension UUID: ColumnValue {
    /// UUIDs are stored as `TEXT`.
    public static var columnType: ColumnType { .text }
    /// The lowercase 36-character form, e.g. `"e621e1f8-c36c-495a-93fc-0c247a3e6e5f"`.
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue {
        .text(uuidString.lowercased())
    }
    /// Accepts the 36-character text form in any case, or a 16-byte BLOB.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> UUID? {
        switch value {
        case .text(let text): return UUID(uuidString: text)
        case .blob(let data) where data.count == 16:
            let b = [UInt8](data)
            return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                               b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        default: return nil
        }
    }
}

extension URL: ColumnValue {
    /// URLs are stored as `TEXT`.
    public static var columnType: ColumnType { .text }
    /// The absolute string.
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue { .text(absoluteString) }
    /// Accepts non-empty text that `URL(string:)` parses.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> URL? {
        guard case .text(let text) = value, !text.isEmpty else { return nil }
        return URL(string: text)
    }
}

extension Decimal: ColumnValue {
    /// Decimals are stored as `TEXT`, so that no digit is lost to binary floating point.
    public static var columnType: ColumnType { .text }
    /// The exact decimal text, e.g. `"12345.6789"`. NaN throws.
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue {
        if isNaN { throw ColumnValueError("a NaN Decimal cannot be stored") }
        return .text(description)
    }
    /// Accepts decimal text (`-12.50`, `.5`, `1e-3`: an optional sign, digits with at most one
    /// point, an optional exponent, nothing else), INTEGER, or REAL (the decimal of its shortest
    /// round-trip digits: `0.1` reads as 0.1).
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> Decimal? {
        switch value {
        case .integer(let int): return Decimal(int)
        case .real(let real): return Decimal.shortestDigits(of: real)
        case .text(let text): return Decimal.parse(text)
        case .null, .blob: return nil
        }
    }
}
