import Foundation

/// The SQL type ActiveObjects declares for a column of a given Swift type.
///
/// It decides the column's affinity in `CREATE TABLE` (see <https://www.sqlite.org/datatype3.html>).
public enum ColumnType: String, Sendable, Hashable {
    /// `INTEGER`: integers, `Bool`, dates as milliseconds.
    case integer = "INTEGER"
    /// `REAL`: `Double`, `Float`, dates as seconds.
    case real = "REAL"
    /// `TEXT`: strings, UUIDs, URLs, decimals, dates as text, JSON.
    case text = "TEXT"
    /// `BLOB`: `Data`, and values stored as they come (``DatabaseValue``).
    case blob = "BLOB"
}

/// How values are converted for one database or model: currently the date format.
///
/// ActiveObjects passes it to every ``ColumnValue`` conversion; custom conformances that
/// do not store dates can ignore it.
public struct ValueContext: Sendable, Hashable {
    /// How `Date` values are written, and how numbers are read as dates.
    public var dateStrategy: DateStrategy

    /// Creates a context with the given date strategy (default `.iso8601Text`).
    public init(dateStrategy: DateStrategy = .iso8601Text) {
        self.dateStrategy = dateStrategy
    }
}

/// Thrown by ``ColumnValue/databaseValue(in:)`` when a Swift value cannot be stored,
/// such as NaN or a `UInt64` above `Int64.max`. ActiveObjects reports it with the table
/// and column as ``ActiveObjectError/invalidValue(table:column:reason:)``.
public struct ColumnValueError: Error, CustomStringConvertible, LocalizedError, Sendable {
    /// Why the value cannot be stored.
    public let reason: String
    /// Creates an error with a human-readable reason.
    public init(_ reason: String) { self.reason = reason }
    /// The reason.
    public var description: String { reason }
    /// The same text as ``description``.
    public var errorDescription: String? { description }
}

/// A Swift type that can be stored in one SQLite column.
///
/// ActiveObjects conforms the integer types, `Bool`, `Double`, `Float`, `String`, `Data`,
/// `Date`, `UUID`, `URL`, `Decimal` and `Optional`. Enums with such a raw value need only an
/// empty conformance:
///
/// ```swift
/// enum Mood: String { case happy, sad }
/// extension Mood: ColumnValue {}
/// ```
///
/// A type of your own converts to and from ``DatabaseValue``:
///
/// ```swift
/// struct Celsius: ColumnValue {
///     var degrees: Double
///     static var columnType: ColumnType { .real }
///     func databaseValue(in context: ValueContext) throws -> DatabaseValue { .real(degrees) }
///     static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> Celsius? {
///         Double.fromDatabaseValue(value, in: context).map(Celsius.init)
///     }
/// }
/// ```
public protocol ColumnValue: Sendable {
    /// The declared SQL type of a column holding this type.
    static var columnType: ColumnType { get }
    /// Whether the column accepts NULL (true only for `Optional`).
    static var isNullable: Bool { get }
    /// This value as SQLite should store it.
    /// - Throws: ``ColumnValueError`` when the value cannot be stored (NaN, out of range…).
    func databaseValue(in context: ValueContext) throws -> DatabaseValue
    /// Converts a stored value, or returns nil when it does not fit this type exactly
    /// (NULL into a non-optional, `300` into `Int8`, `'abc'` into `Int`, `3.7` into `Int`).
    static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> Self?
}

extension ColumnValue {
    /// Non-optional types are `NOT NULL`.
    public static var isNullable: Bool { false }
}

// MARK: - Integers

extension ColumnValue where Self: FixedWidthInteger {
    /// Integers are stored as `INTEGER`.
    public static var columnType: ColumnType { .integer }

    /// The value as a 64-bit integer; values above `Int64.max` (from `UInt64`/`UInt`) throw.
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue {
        guard let value = Int64(exactly: self) else {
            throw ColumnValueError("\(self) does not fit in SQLite's 64-bit signed INTEGER")
        }
        return .integer(value)
    }

    /// Accepts an INTEGER in range, a REAL with no fraction, or text that spells an integer.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> Self? {
        switch value {
        case .integer(let int): return Self(exactly: int)
        case .real(let real):
            // Int64(exactly:) is nil for NaN, infinities, fractions and out-of-range values.
            return Int64(exactly: real).flatMap { Self(exactly: $0) }
        case .text(let text): return Int64(text).flatMap { Self(exactly: $0) }
        case .null, .blob: return nil
        }
    }
}

extension Int: ColumnValue {}
extension Int8: ColumnValue {}
extension Int16: ColumnValue {}
extension Int32: ColumnValue {}
extension Int64: ColumnValue {}
extension UInt: ColumnValue {}
extension UInt8: ColumnValue {}
extension UInt16: ColumnValue {}
extension UInt32: ColumnValue {}
extension UInt64: ColumnValue {}

// MARK: - Bool, floating point, text, bytes

extension Bool: ColumnValue {
    /// Booleans are stored as `INTEGER` 0 or 1.
    public static var columnType: ColumnType { .integer }
    /// `1` for true, `0` for false.
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue { .integer(self ? 1 : 0) }
    /// Accepts exactly 0 or 1 (as INTEGER or REAL); anything else is a mismatch.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> Bool? {
        switch Int64.fromDatabaseValue(value, in: context) {
        case 0?: return false
        case 1?: return true
        default: return nil
        }
    }
}

extension Double: ColumnValue {
    /// Doubles are stored as `REAL`.
    public static var columnType: ColumnType { .real }
    /// The value as REAL. NaN throws: SQLite would silently store it as NULL.
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue {
        if isNaN { throw ColumnValueError("NaN cannot be stored (SQLite would store NULL)") }
        return .real(self)
    }
    /// Accepts REAL, an INTEGER that converts exactly, or numeric text.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> Double? {
        switch value {
        case .real(let real): return real
        case .integer(let int): return Double(exactly: int)
        case .text(let text): return Double(text)
        case .null, .blob: return nil
        }
    }
}

extension Float: ColumnValue {
    /// Floats are stored as `REAL`.
    public static var columnType: ColumnType { .real }
    /// The value widened to REAL (exact). NaN throws.
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue {
        try Double(self).databaseValue(in: context)
    }
    /// Accepts what `Double` accepts, rounded to the nearest `Float`; finite values beyond
    /// `Float`'s range are a mismatch.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> Float? {
        guard let double = Double.fromDatabaseValue(value, in: context) else { return nil }
        let float = Float(double)
        if float.isInfinite && double.isFinite { return nil }
        return float
    }
}

extension String: ColumnValue {
    /// Strings are stored as `TEXT`.
    public static var columnType: ColumnType { .text }
    /// The string as TEXT.
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue { .text(self) }
    /// Accepts TEXT, and INTEGER or REAL written as their decimal text. BLOB is a mismatch.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> String? {
        switch value {
        case .text(let text): return text
        case .integer(let int): return String(int)
        case .real(let real): return String(real)
        case .null, .blob: return nil
        }
    }
}

extension Data: ColumnValue {
    /// Data is stored as `BLOB`.
    public static var columnType: ColumnType { .blob }
    /// The bytes as BLOB (an empty `Data` stays an empty BLOB, not NULL).
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue { .blob(self) }
    /// Accepts BLOB, and TEXT as its UTF-8 bytes.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> Data? {
        switch value {
        case .blob(let data): return data
        case .text(let text): return Data(text.utf8)
        case .null, .integer, .real: return nil
        }
    }
}

extension DatabaseValue: ColumnValue {
    /// Raw database values are declared `BLOB`, the type that applies no conversion.
    public static var columnType: ColumnType { .blob }
    /// A raw value may be NULL.
    public static var isNullable: Bool { true }
    /// The value itself.
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue { self }
    /// The value itself.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> DatabaseValue? { value }
}

// MARK: - Optional and enums

extension Optional: ColumnValue where Wrapped: ColumnValue {
    /// The wrapped type's column type.
    public static var columnType: ColumnType { Wrapped.columnType }
    /// Optional columns accept NULL.
    public static var isNullable: Bool { true }
    /// `nil` is NULL; a value converts as `Wrapped` does.
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue {
        switch self {
        case .none: return .null
        case .some(let wrapped): return try wrapped.databaseValue(in: context)
        }
    }
    /// NULL is `nil`; anything else must fit `Wrapped`.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> Wrapped?? {
        if case .null = value { return .some(nil) }
        return Wrapped.fromDatabaseValue(value, in: context).map { .some($0) }
    }
}

extension ColumnValue where Self: RawRepresentable, RawValue: ColumnValue {
    /// The raw value's column type.
    public static var columnType: ColumnType { RawValue.columnType }
    /// The raw value.
    public func databaseValue(in context: ValueContext) throws -> DatabaseValue {
        try rawValue.databaseValue(in: context)
    }
    /// The case whose raw value is stored; an unknown raw value is a mismatch.
    public static func fromDatabaseValue(_ value: DatabaseValue, in context: ValueContext) -> Self? {
        RawValue.fromDatabaseValue(value, in: context).flatMap { Self(rawValue: $0) }
    }
}

extension Array where Element == (any ColumnValue)? {
    /// SQL arguments as given (`[name, nil]`, `[Optional<Int>.none]`): each `nil` is SQL NULL.
    var nilsAsNull: [any ColumnValue] { map { $0 ?? DatabaseValue.null } }
}
