import CSQLite
import Foundation

/// The Swift types that a statement can write straight into memory, for the hot loop that
/// fills fetched objects: no ``DatabaseValue`` in between, one column lookup per value.
enum NativeType {
    case none, int, int64, double, string, bool, data, date, decimal
    case optionalInt, optionalInt64, optionalDouble, optionalString, optionalBool, optionalData
    case optionalDate, optionalDecimal

    /// The native type for a Swift type, or `.none` (read through ``ColumnValue`` instead).
    init(_ type: Any.Type) {
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(Int.self): self = .int
        case ObjectIdentifier(Int64.self): self = .int64
        case ObjectIdentifier(Double.self): self = .double
        case ObjectIdentifier(String.self): self = .string
        case ObjectIdentifier(Bool.self): self = .bool
        case ObjectIdentifier(Data.self): self = .data
        case ObjectIdentifier(Date.self): self = .date
        case ObjectIdentifier(Decimal.self): self = .decimal
        case ObjectIdentifier(Int?.self): self = .optionalInt
        case ObjectIdentifier(Int64?.self): self = .optionalInt64
        case ObjectIdentifier(Double?.self): self = .optionalDouble
        case ObjectIdentifier(String?.self): self = .optionalString
        case ObjectIdentifier(Bool?.self): self = .optionalBool
        case ObjectIdentifier(Data?.self): self = .optionalData
        case ObjectIdentifier(Date?.self): self = .optionalDate
        case ObjectIdentifier(Decimal?.self): self = .optionalDecimal
        default: self = .none
        }
    }
}

extension Statement {
    /// Writes column `index` of the current row into the `type` at `pointer`, when the stored
    /// value has exactly the matching storage class (or is NULL, for an optional). Returns false,
    /// having written nothing, in every other case: the caller then converts through
    /// ``value(at:)`` and ``ColumnValue``, which also reports mismatches.
    ///
    /// Dates are read here only from TEXT (parsed from SQLite's own bytes, whatever the date
    /// strategy: every strategy reads text the same way); numbers stored as dates depend on the
    /// strategy and take the general path. Decimals are read from INTEGER, REAL and TEXT with
    /// the conversions ``Decimal/fromDatabaseValue(_:in:)`` uses.
    ///
    /// Uses `sqlite3_column_value` and the `sqlite3_value_*` readers: one column lookup per
    /// value instead of one per call (<https://www.sqlite.org/c3ref/column_blob.html>). The
    /// value is unprotected, which is safe here: it is read at once, on the thread that holds
    /// the connection. TEXT is decoded with its byte length; BLOB keeps empty data non-NULL.
    @inline(__always)
    func store(column index: Int32, as type: NativeType, at pointer: UnsafeMutableRawPointer) -> Bool {
        guard type != .none, let handle = sqliteStatement, let value = sqlite3_column_value(handle, index) else {
            return false
        }
        // One jump on the Swift type, then one comparison of the storage class (a switch on
        // the pair compiles to a chain of comparisons).
        let storage = sqlite3_value_type(value)
        switch type {
        case .none:
            return false
        case .int:
            guard storage == SQLITE_INTEGER, let int = Int(exactly: sqlite3_value_int64(value)) else { return false }
            pointer.assumingMemoryBound(to: Int.self).pointee = int
        case .int64:
            guard storage == SQLITE_INTEGER else { return false }
            pointer.assumingMemoryBound(to: Int64.self).pointee = sqlite3_value_int64(value)
        case .double:
            guard storage == SQLITE_FLOAT else { return false }
            pointer.assumingMemoryBound(to: Double.self).pointee = sqlite3_value_double(value)
        case .string:
            guard storage == SQLITE_TEXT else { return false }
            pointer.assumingMemoryBound(to: String.self).pointee = Self.text(of: value)
        case .bool:
            guard storage == SQLITE_INTEGER else { return false }
            switch sqlite3_value_int64(value) {
            case 0: pointer.assumingMemoryBound(to: Bool.self).pointee = false
            case 1: pointer.assumingMemoryBound(to: Bool.self).pointee = true
            default: return false
            }
        case .data:
            guard storage == SQLITE_BLOB else { return false }
            pointer.assumingMemoryBound(to: Data.self).pointee = Self.blob(of: value)
        case .date:
            guard storage == SQLITE_TEXT, let date = Self.date(of: value) else { return false }
            pointer.assumingMemoryBound(to: Date.self).pointee = date
        case .decimal:
            guard let decimal = Self.decimal(of: value, storage: storage) else { return false }
            pointer.assumingMemoryBound(to: Decimal.self).pointee = decimal
        case .optionalInt:
            if storage == SQLITE_NULL { pointer.assumingMemoryBound(to: Int?.self).pointee = nil; return true }
            guard storage == SQLITE_INTEGER, let int = Int(exactly: sqlite3_value_int64(value)) else { return false }
            pointer.assumingMemoryBound(to: Int?.self).pointee = int
        case .optionalInt64:
            if storage == SQLITE_NULL { pointer.assumingMemoryBound(to: Int64?.self).pointee = nil; return true }
            guard storage == SQLITE_INTEGER else { return false }
            pointer.assumingMemoryBound(to: Int64?.self).pointee = sqlite3_value_int64(value)
        case .optionalDouble:
            if storage == SQLITE_NULL { pointer.assumingMemoryBound(to: Double?.self).pointee = nil; return true }
            guard storage == SQLITE_FLOAT else { return false }
            pointer.assumingMemoryBound(to: Double?.self).pointee = sqlite3_value_double(value)
        case .optionalString:
            if storage == SQLITE_NULL { pointer.assumingMemoryBound(to: String?.self).pointee = nil; return true }
            guard storage == SQLITE_TEXT else { return false }
            pointer.assumingMemoryBound(to: String?.self).pointee = Self.text(of: value)
        case .optionalBool:
            if storage == SQLITE_NULL { pointer.assumingMemoryBound(to: Bool?.self).pointee = nil; return true }
            guard storage == SQLITE_INTEGER else { return false }
            switch sqlite3_value_int64(value) {
            case 0: pointer.assumingMemoryBound(to: Bool?.self).pointee = false
            case 1: pointer.assumingMemoryBound(to: Bool?.self).pointee = true
            default: return false
            }
        case .optionalData:
            if storage == SQLITE_NULL { pointer.assumingMemoryBound(to: Data?.self).pointee = nil; return true }
            guard storage == SQLITE_BLOB else { return false }
            pointer.assumingMemoryBound(to: Data?.self).pointee = Self.blob(of: value)
        case .optionalDate:
            if storage == SQLITE_NULL { pointer.assumingMemoryBound(to: Date?.self).pointee = nil; return true }
            guard storage == SQLITE_TEXT, let date = Self.date(of: value) else { return false }
            pointer.assumingMemoryBound(to: Date?.self).pointee = date
        case .optionalDecimal:
            if storage == SQLITE_NULL { pointer.assumingMemoryBound(to: Decimal?.self).pointee = nil; return true }
            guard let decimal = Self.decimal(of: value, storage: storage) else { return false }
            pointer.assumingMemoryBound(to: Decimal?.self).pointee = decimal
        }
        return true
    }

    /// The decimal an INTEGER, REAL or TEXT value holds; nil for any other storage class, or
    /// text that is not a decimal.
    @inline(__always)
    private static func decimal(of value: OpaquePointer, storage: Int32) -> Decimal? {
        switch storage {
        case SQLITE_FLOAT: return Decimal.shortestDigits(of: sqlite3_value_double(value))
        case SQLITE_INTEGER: return Decimal(sqlite3_value_int64(value))
        case SQLITE_TEXT: return decimal(of: value)
        default: return nil
        }
    }

    @inline(__always)
    private static func text(of value: OpaquePointer) -> String {
        // Ask for the text first, then its length: the order SQLite documents as safe.
        guard let text = sqlite3_value_text(value) else { return "" }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The date a TEXT value spells, parsed in place; nil when it is not a date.
    @inline(__always)
    private static func date(of value: OpaquePointer) -> Date? {
        guard let text = sqlite3_value_text(value) else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        return DateText.parse(UnsafeBufferPointer(start: text, count: count))
    }

    /// The decimal a TEXT value spells, parsed in place; nil when it is not a decimal.
    @inline(__always)
    private static func decimal(of value: OpaquePointer) -> Decimal? {
        guard let text = sqlite3_value_text(value) else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        return Decimal.parse(UnsafeBufferPointer(start: text, count: count))
    }

    @inline(__always)
    private static func blob(of value: OpaquePointer) -> Data {
        guard let bytes = sqlite3_value_blob(value) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_value_bytes(value)))
    }
}
