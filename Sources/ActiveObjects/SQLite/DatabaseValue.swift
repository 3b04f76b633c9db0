import Foundation

/// A value as SQLite stores it: one of its five storage classes.
///
/// It is the currency between Swift values and the database: ``ColumnValue`` converts to
/// and from it, and ``Row`` holds it.
///
/// ```swift
/// let v: DatabaseValue = .text("Joe")
/// ```
public enum DatabaseValue: Sendable, Hashable, CustomStringConvertible {
    /// SQL NULL.
    case null
    /// A 64-bit signed integer (SQLite's INTEGER storage class).
    case integer(Int64)
    /// A double-precision float (SQLite's REAL storage class).
    case real(Double)
    /// UTF-8 text (SQLite's TEXT storage class).
    case text(String)
    /// Raw bytes (SQLite's BLOB storage class).
    case blob(Data)

    /// True for ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short description for error messages: storage class and a shortened value,
    /// e.g. `TEXT 'abc'`, `INTEGER 300`, `NULL`, `BLOB (16 bytes)`.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return "INTEGER \(value)"
        case .real(let value): return "REAL \(value)"
        case .text(let value):
            let shown = value.count > 40 ? String(value.prefix(40)) + "…" : value
            return "TEXT '\(shown)'"
        case .blob(let data): return "BLOB (\(data.count) bytes)"
        }
    }

    /// Value equality the way SQLite compares stored values, except that NULL equals NULL.
    /// Used by dirty tracking: `-0.0` and `0.0` are equal, so are two NaN payloads.
    static func sameStoredValue(_ lhs: DatabaseValue, _ rhs: DatabaseValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.integer(a), .integer(b)): return a == b
        case let (.real(a), .real(b)): return a == b || (a.isNaN && b.isNaN)
        case let (.text(a), .text(b)): return a == b
        case let (.blob(a), .blob(b)): return a == b
        default: return false
        }
    }
}

extension DatabaseValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
    /// `nil` is ``null``.
    public init(nilLiteral: ()) { self = .null }
    /// An integer literal is ``integer(_:)``.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A float literal is ``real(_:)``.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// A string literal is ``text(_:)``.
    public init(stringLiteral value: String) { self = .text(value) }
    /// `true` is `1`, `false` is `0`, as SQLite stores booleans.
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}
