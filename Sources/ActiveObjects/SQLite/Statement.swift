import CSQLite
import Foundation

/// One prepared statement. Internal: only `Core` touches `sqlite3_*`; the model and query
/// layers read rows through these methods.
///
/// Not thread-safe: every use happens while the owning ``Connection``'s lock is held.
final class Statement {
    /// The compiled statement; nil once finalized (by `finalize()` or by closing the connection).
    @exclusivity(unchecked) private(set) var sqliteStatement: OpaquePointer?
    /// The SQL text it was prepared from (placeholders, never values).
    let sql: String
    /// Whether the SQL mentions REPLACE (which may delete rows without telling SQLite's update
    /// hook): learned once per statement, when live results first need it.
    lazy var mentionsReplace: Bool = SQLText.mayReplace(sql)
    /// The connection that prepared it (kept alive while the statement lives).
    let connection: Connection
    /// The tables it reads and writes, as SQLite reported them while compiling it — learned
    /// again when SQLite re-compiled it after a schema change (see ``Connection/automaticRecompiles``).
    @exclusivity(unchecked) var info: StatementInfo
    /// The schema cookies (``Connection/currentSchemaCookie()``) under which `info` was learned.
    @exclusivity(unchecked) var infoCookie: Int64 = -1
    /// Whether a large TEXT or BLOB is bound (SQLite keeps its own copy until rebound).
    @exclusivity(unchecked) private var holdsLargeBinding = false
    /// Where the texts bound to this statement are copied (created on the first one).
    @exclusivity(unchecked) private var textArena: TextArena?
    /// From this many bytes on, a bound value is released by `reset()` rather than kept
    /// until the statement's next use.
    private static let largeBindingBytes = 4 * 1024

    init(sqliteStatement: OpaquePointer, sql: String, info: StatementInfo, connection: Connection) {
        self.sqliteStatement = sqliteStatement
        self.sql = sql
        self.info = info
        self.connection = connection
    }

    deinit {
        // A statement may be released on any thread (e.g. a cursor dropped by user code), but
        // the connection is opened without SQLite's own mutex: finalize under our lock.
        connection.lock.withLock { finalize() }
    }

    /// Finalizes the statement unless its connection already did (on close).
    func finalize() {
        if let handle = sqliteStatement { connection.finalize(handle) }
        sqliteStatement = nil
    }

    private func handle() throws -> OpaquePointer {
        guard let handle = sqliteStatement, connection.sqliteConnection != nil else {
            throw ActiveObjectError.databaseClosed
        }
        return handle
    }

    /// True while a step has started and the statement was not reset (`sqlite3_stmt_busy`).
    var isBusy: Bool { sqliteStatement.map { sqlite3_stmt_busy($0) != 0 } ?? false }

    /// True when the statement does not write the database file (`sqlite3_stmt_readonly`).
    var isReadOnly: Bool { sqliteStatement.map { sqlite3_stmt_readonly($0) != 0 } ?? true }


    // MARK: Binding

    /// Binds every parameter, in order. The count must match the statement's parameters.
    func bind(_ values: [DatabaseValue]) throws {
        let handle = try handle()
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw ActiveObjectError.invalidSQL(
                sql: sql, reason: "expected \(expected) argument(s), got \(values.count)")
        }
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one parameter (1-based). TEXT and BLOB use the 64-bit length APIs, so a value
    /// over 2 GiB is SQLite's `tooBig` error rather than a trap.
    func bind(_ value: DatabaseValue, at index: Int32) throws {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let int): try bind(int, at: index)
        case .real(let real): try bind(real, at: index)
        case .text(let text): try bind(text: text, at: index)
        case .blob(let data): try bind(blob: data, at: index)
        }
    }

    // The typed binds: model writes call them straight from a property's memory (see
    // `ColumnAccessor.bind`), without a `DatabaseValue` in between.

    @inline(__always)
    func bindNull(at index: Int32) throws {
        try check(sqlite3_bind_null(try handle(), index))
    }

    @inline(__always)
    func bind(_ int: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(try handle(), index, int))
    }

    @inline(__always)
    func bind(_ real: Double, at index: Int32) throws {
        try check(sqlite3_bind_double(try handle(), index, real))
    }

    func bind(text: String, at index: Int32) throws {
        var text = text
        try text.withUTF8 { try bind(utf8: $0, at: index) }
    }

    /// Binds `text` (at `pointer`) without copying the string first: the common case of a
    /// model's `String` property, bound straight from the object's memory.
    @inline(__always)
    func bind(textAt pointer: UnsafePointer<String>, at index: Int32) throws {
        if let bound = try pointer.pointee.utf8.withContiguousStorageIfAvailable({ try bind(utf8: $0, at: index) }) {
            return bound
        }
        try bind(text: pointer.pointee, at: index)
    }

    /// Binds UTF-8 bytes as TEXT: copied into the statement's arena (bound `SQLITE_STATIC`),
    /// or, when long, into SQLite's own copy.
    private func bind(utf8 bytes: UnsafeBufferPointer<UInt8>, at index: Int32) throws {
        let handle = try handle()
        // An empty buffer has no base address; "" keeps the value TEXT, not NULL.
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            return try check(sqlite3_bind_text(handle, index, "", 0, activeobjects_transient()))
        }
        if bytes.count <= TextArena.longestText {
            // SQLITE_STATIC: SQLite reads the copy in the statement's own arena.
            let arena = textArena ?? makeTextArena()
            if let borrowed = arena.copy(bytes) {
                return try check(sqlite3_bind_text64(handle, index, borrowed, UInt64(bytes.count), nil, UInt8(SQLITE_UTF8)))
            }
        }
        if bytes.count >= Self.largeBindingBytes { holdsLargeBinding = true }
        let code = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { chars in
            sqlite3_bind_text64(handle, index, chars, UInt64(bytes.count), activeobjects_transient(), UInt8(SQLITE_UTF8))
        }
        try check(code)
    }

    private func makeTextArena() -> TextArena {
        let arena = TextArena()
        textArena = arena
        return arena
    }

    func bind(blob data: Data, at index: Int32) throws {
        let handle = try handle()
        let code = data.withUnsafeBytes { bytes in
            // A NULL pointer would bind NULL: give SQLite a valid address for empty data.
            if bytes.count == 0 { return sqlite3_bind_zeroblob(handle, index, 0) }
            if bytes.count >= Self.largeBindingBytes { holdsLargeBinding = true }
            return sqlite3_bind_blob64(handle, index, bytes.baseAddress, UInt64(bytes.count),
                                       activeobjects_transient())
        }
        try check(code)
    }

    @inline(__always)
    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else {
            throw DatabaseError(code: code, connection: connection.sqliteConnection, sql: sql)
        }
    }

    // MARK: Stepping

    /// Advances to the next row: true when a row is available, false when done.
    func step() throws -> Bool {
        let handle = try handle()
        switch sqlite3_step(handle) {
        case SQLITE_ROW:
            if let fingerprint = connection.fingerprint { fingerprint.add(row: handle) }
            return true
        case SQLITE_DONE: return false
        case let code:
            let error = DatabaseError(code: code, connection: connection.sqliteConnection, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Resets the statement, ending any read transaction it held, clears large bindings, and
    /// gives its text arena back to the next execution.
    ///
    /// `sqlite3_reset` keeps the bindings (https://www.sqlite.org/c3ref/reset.html). A stale
    /// value can never reach the next execution, because ``bind(_:)`` requires a value for
    /// every parameter ("or bind every slot", as our SQLite notes put it). What stays is memory:
    /// so a statement that holds a TEXT or BLOB of 4 KiB or more is cleared with
    /// `sqlite3_clear_bindings`. Clearing after every execution measured about 1,000
    /// instructions per 10-column INSERT, 6 % of a whole `save()`.
    func reset() {
        guard let handle = sqliteStatement, connection.sqliteConnection != nil else { return }
        sqlite3_reset(handle)
        // Arena blocks about to be freed must not stay bound, even unread.
        if holdsLargeBinding || textArena?.spansSeveralBlocks == true {
            sqlite3_clear_bindings(handle)
            holdsLargeBinding = false
        }
        textArena?.reset()
    }

    // MARK: Reading the current row

    /// Number of result columns.
    var columnCount: Int32 { sqliteStatement.map { sqlite3_column_count($0) } ?? 0 }

    /// The name of a result column (its alias, or the column name).
    func columnName(_ index: Int32) -> String {
        guard let handle = sqliteStatement, let name = sqlite3_column_name(handle, index) else { return "" }
        return String(cString: name)
    }

    /// All result column names, in order.
    var columnNames: [String] { (0..<columnCount).map(columnName) }

    /// The value of a column of the current row, read according to its storage class.
    ///
    /// TEXT is decoded with its byte length, so an embedded NUL survives; invalid UTF-8
    /// written by another program is repaired with U+FFFD. A zero-length BLOB is empty
    /// `Data`, not NULL.
    @inline(__always)
    func value(at index: Int32) -> DatabaseValue {
        guard let handle = sqliteStatement else { return .null }
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            // Ask for the text first, then its length: the order SQLite documents as safe.
            guard let text = sqlite3_column_text(handle, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            guard let bytes = sqlite3_column_blob(handle, index) else { return .blob(Data()) }
            let count = Int(sqlite3_column_bytes(handle, index))
            return .blob(Data(bytes: bytes, count: count))
        default:
            return .null
        }
    }

    /// The rowid-like integer of a column, when it holds an INTEGER.
    func int64IfInteger(at index: Int32) -> Int64? {
        guard let handle = sqliteStatement, sqlite3_column_type(handle, index) == SQLITE_INTEGER else {
            return nil
        }
        return sqlite3_column_int64(handle, index)
    }
}
