import CSQLite
import Foundation

/// An SQLite result code, such as `.busy` or `.constraint`.
///
/// Compare a ``DatabaseError``'s ``DatabaseError/resultCode`` with these constants:
///
/// ```swift
/// do { try db.execute("INSERT INTO person(name) VALUES (NULL)") }
/// catch let error as DatabaseError where error.resultCode == .constraint { … }
/// ```
///
/// See <https://www.sqlite.org/rescode.html>.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric code as SQLite reports it.
    public let rawValue: Int32

    /// Wraps a numeric SQLite result code.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code: the low 8 bits of an extended result code.
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// Generic error (`SQLITE_ERROR`), e.g. an SQL syntax error or a missing table.
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    /// Internal logic error in SQLite (`SQLITE_INTERNAL`).
    public static let `internal` = ResultCode(rawValue: SQLITE_INTERNAL)
    /// Access permission denied (`SQLITE_PERM`).
    public static let permission = ResultCode(rawValue: SQLITE_PERM)
    /// The operation was aborted (`SQLITE_ABORT`).
    public static let abort = ResultCode(rawValue: SQLITE_ABORT)
    /// The database file is locked by another connection (`SQLITE_BUSY`).
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    /// A table is locked (`SQLITE_LOCKED`).
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    /// Out of memory (`SQLITE_NOMEM`).
    public static let noMemory = ResultCode(rawValue: SQLITE_NOMEM)
    /// Attempt to write a read-only database (`SQLITE_READONLY`).
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    /// Operation interrupted (`SQLITE_INTERRUPT`).
    public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
    /// Disk I/O error (`SQLITE_IOERR`).
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    /// The database file is malformed (`SQLITE_CORRUPT`).
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    /// The database or disk is full (`SQLITE_FULL`).
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    /// Unable to open the database file (`SQLITE_CANTOPEN`).
    public static let cannotOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    /// The database schema changed (`SQLITE_SCHEMA`).
    public static let schema = ResultCode(rawValue: SQLITE_SCHEMA)
    /// A string or blob exceeds the size limit (`SQLITE_TOOBIG`).
    public static let tooBig = ResultCode(rawValue: SQLITE_TOOBIG)
    /// A constraint (NOT NULL, UNIQUE, FOREIGN KEY, CHECK) was violated (`SQLITE_CONSTRAINT`).
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    /// Data type mismatch (`SQLITE_MISMATCH`).
    public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
    /// Library used incorrectly (`SQLITE_MISUSE`).
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    /// Bind parameter out of range (`SQLITE_RANGE`).
    public static let range = ResultCode(rawValue: SQLITE_RANGE)
    /// The file is not a database (`SQLITE_NOTADB`).
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)

    /// SQLite's English description of the code, e.g. `"database is locked"`.
    public var description: String {
        "\(rawValue) (\(String(cString: sqlite3_errstr(rawValue))))"
    }
}

/// An error reported by SQLite: its result codes, its message, and the SQL that failed.
///
/// Bound argument values are deliberately left out of ``description`` so that logs never
/// leak user data.
///
/// ```swift
/// do { try db.execute("SELEKT 1") }
/// catch let error as DatabaseError {
///     print(error.resultCode)   // 1 (SQL logic error)
///     print(error.sql ?? "")    // SELEKT 1
/// }
/// ```
///
/// Two errors are equal when their extended result code, message and SQL are.
public struct DatabaseError: Error, CustomStringConvertible, LocalizedError, Sendable, Equatable {
    /// The primary result code (the low 8 bits of ``extendedResultCode``), e.g. `.busy`.
    public var resultCode: ResultCode { extendedResultCode.primary }
    /// The extended result code, e.g. `SQLITE_CONSTRAINT_UNIQUE` (2067).
    public let extendedResultCode: ResultCode
    /// SQLite's error message, e.g. `"UNIQUE constraint failed: person.email"`.
    public let message: String
    /// The SQL statement that failed, when there was one.
    public let sql: String?

    /// Creates an error from its parts.
    public init(extendedResultCode: ResultCode, message: String, sql: String? = nil) {
        self.extendedResultCode = extendedResultCode
        self.message = message
        self.sql = sql
    }

    /// Builds an error from a connection's current error state.
    init(code: Int32, connection: OpaquePointer?, sql: String?) {
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        // The extended code of the connection may belong to an earlier call; trust it only
        // when its primary part matches the code this call returned.
        let chosen = (extended & 0xFF) == (code & 0xFF) ? extended : code
        let text = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        self.init(extendedResultCode: ResultCode(rawValue: chosen), message: text, sql: sql)
    }

    /// A readable summary: code, message and SQL (never the bound values).
    public var description: String {
        var text = "SQLite error \(extendedResultCode.rawValue): \(message)"
        if let sql { text += " — while executing `\(sql)`" }
        return text
    }

    /// The same text as ``description``, for `localizedDescription` and Apple's UI frameworks.
    public var errorDescription: String? { description }
}
