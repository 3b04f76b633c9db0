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

    /// A readable summary: code, message and SQL (never the bound values), and the remedy
    /// when there is an obvious one (a model's table or column that was never created:
    /// `no such table: book` → call `Book.createTable()`).
    public var description: String {
        var text = "SQLite error \(extendedResultCode.rawValue): \(message)"
        if let sql { text += " — while executing `\(sql)`" }
        if let remedy { text += ". \(remedy)" }
        return text
    }

    /// What to do about this error, when it is obvious: the table of a model that was never
    /// created, or a column a model declares that its table lacks.
    public var remedy: String? {
        guard resultCode == .error else { return nil }
        let table: String
        if message.hasPrefix("no such table: ") {
            table = String(message.dropFirst("no such table: ".count))
        } else if message.hasPrefix("table "), let range = message.range(of: " has no column named ") {
            table = String(message[message.index(message.startIndex, offsetBy: 6)..<range.lowerBound])
        } else {
            return nil
        }
        // "main.book" names the schema too.
        let bare = table.split(separator: ".").last.map(String.init) ?? table
        guard let model = ModelTables.model(forTable: bare) else { return nil }
        return message.hasPrefix("no such table")
            ? "\(model)'s table does not exist in this database: call \(model).createTable() (or run the migration that creates it) before using \(model)"
            : "\(model) declares a column its table lacks: call \(model).createTable(), which adds missing columns (or run the migration that adds it)"
    }

    /// The same text as ``description``, for `localizedDescription` and Apple's UI frameworks.
    public var errorDescription: String? { description }
}

/// Which model class maps which table (lowercased), as the models' schemas are built: lets a
/// ``DatabaseError`` name the model whose table or column is missing, and the call that
/// creates it. Filled by the Model layer; the SQLite layer only reads it.
enum ModelTables {
    private static let owners = LockedValue<[String: String]>([:])

    /// Records that `model` maps `table`.
    static func register(_ table: String, model: String) {
        owners.withLock { $0[table.lowercased()] = model }
    }

    /// The model that maps `table`, if one was used in this process.
    static func model(forTable table: String) -> String? {
        owners.withLock { $0[table.lowercased()] }
    }
}
