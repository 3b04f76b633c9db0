import CSQLite
import Foundation

/// The SQLite connection behind a ``Database``: opening, configuration, the statement cache,
/// and statement execution.
///
/// Not thread-safe by itself. It is opened with `SQLITE_OPEN_NOMUTEX` (SQLite's per-call
/// mutex measured 1.27× slower on fetches) because every use goes through `lock`, a recursive
/// lock held by ``Database`` for each call and for the whole of a transaction.
final class Connection {
    /// Serializes all access to the connection and to its statements.
    let lock = NSRecursiveLock()
    /// The C handle; nil once closed.
    private(set) var sqliteConnection: OpaquePointer?
    let path: String
    let options: Database.Options
    let valueContext: ValueContext
    /// Depth of nested ``Database/transaction(_:)`` calls (0 = none).
    var transactionDepth = 0
    /// Undo actions for model objects written inside ``Database/transaction(_:)`` (their `id`
    /// and snapshot before the write), run in reverse order when the transaction or savepoint
    /// that wrote them rolls back, so the objects match the database again.
    var rollbackActions: [UndoEntry] = []
    /// How many statements were compiled; tests use it to prove the cache works.
    private(set) var preparedStatementCount = 0

    private var cache: [StatementKey: CacheEntry] = [:]
    private var useClock: UInt64 = 0

    private final class CacheEntry {
        let statement: Statement
        var lastUse: UInt64
        /// The ``SharedSQL`` whose identity is the key: kept alive with the entry, so that its
        /// address can never be reused by other SQL while the entry exists.
        let keyOwner: AnyObject?
        init(_ statement: Statement, lastUse: UInt64, keyOwner: AnyObject?) {
            (self.statement, self.lastUse, self.keyOwner) = (statement, lastUse, keyOwner)
        }
    }

    init(path: String, options: Database.Options) throws {
        self.path = path
        self.options = options
        self.valueContext = ValueContext(dateStrategy: options.dateStrategy)
        // A directory opens read-only without complaint and then fails every read with an
        // I/O error: refuse it up front with the same error as a read-write open.
        var isDirectory: ObjCBool = false
        if !path.hasPrefix("file:"), FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
           isDirectory.boolValue {
            throw DatabaseError(extendedResultCode: .cannotOpen, message: "cannot open \(path): it is a directory")
        }
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        flags |= options.readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = DatabaseError(code: code, connection: handle, sql: nil)
            sqlite3_close(handle)
            throw DatabaseError(extendedResultCode: error.extendedResultCode,
                                message: "cannot open \(path): \(error.message)")
        }
        sqliteConnection = handle
        do {
            try configure(handle)
        } catch {
            closeNow()
            throw error
        }
    }

    deinit { closeNow() }

    private func configure(_ handle: OpaquePointer) throws {
        sqlite3_extended_result_codes(handle, 1)
        // Double-quoted string literals would turn a misspelled "column" into a string.
        activeobjects_set_dqs_dml(handle, 0)
        activeobjects_set_dqs_ddl(handle, 0)
        sqlite3_busy_timeout(handle, Int32(clamping: options.busyTimeoutNanoseconds / 1_000_000))
        // The probe: opening a file that is not a database succeeds; the first read fails
        // with SQLITE_NOTADB. Read before anything writes, so such a file is left untouched.
        _ = try scalarValue("PRAGMA schema_version")
        activeobjects_set_foreign_keys(handle, options.foreignKeys ? 1 : 0)
        let inMemory = path == ":memory:" || path.isEmpty || path.hasPrefix("file::memory:")
        if !options.readOnly && !inMemory {
            let mode = options.journalMode.rawValue
            _ = try scalarValue("PRAGMA journal_mode = \(mode)")
        }
    }

    /// Finalizes every statement, then closes. Safe to call twice.
    func closeNow() {
        guard let handle = sqliteConnection else { return }
        for entry in cache.values { entry.statement.finalize() }
        cache.removeAll()
        // Statements still held elsewhere (an open cursor) are finalized here too; their
        // objects see the connection closed and throw `databaseClosed` on use.
        while let statement = sqlite3_next_stmt(handle, nil) {
            sqlite3_finalize(statement)
        }
        sqlite3_close(handle)
        sqliteConnection = nil
    }

    /// Empties the undo log (the outermost transaction ended).
    func clearUndoLog() {
        rollbackActions.removeAll(keepingCapacity: true)
    }

    /// Runs, newest first, the undo actions recorded since `mark`, and forgets them.
    func undoObjectWrites(from mark: Int) {
        guard mark < rollbackActions.count else { return }
        let actions = rollbackActions[mark...]
        rollbackActions.removeSubrange(mark...)
        for action in actions.reversed() {
            switch action {
            case .forgetInsert(let entry):
                // An object deallocated meanwhile has nothing left to undo.
                (entry.object as? InsertUndoable)?.forgetInsert()
            case .run(let undo): undo()
            }
        }
    }

    func checkOpen() throws -> OpaquePointer {
        guard let handle = sqliteConnection else { throw ActiveObjectError.databaseClosed }
        return handle
    }

    // MARK: Preparing

    /// Compiles exactly one statement. SQL after the first statement (other than whitespace
    /// and comments) is refused, never executed: `sqlite3_exec` would run it.
    func prepare(_ sql: String, persistent: Bool = false) throws -> Statement {
        let handle = try checkOpen()
        var statement: OpaquePointer?
        var failure: Error?
        let flags = UInt32(persistent ? SQLITE_PREPARE_PERSISTENT : 0)
        sql.withCString { start in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(handle, start, -1, flags, &statement, &tail)
            guard code == SQLITE_OK else {
                failure = DatabaseError(code: code, connection: handle, sql: sql)
                return
            }
            guard statement != nil else {
                failure = ActiveObjectError.invalidSQL(sql: sql, reason: "it contains no statement")
                return
            }
            // Anything left must compile to nothing (whitespace, comments, semicolons).
            while let rest = tail, rest.pointee != 0 {
                var extra: OpaquePointer?
                var next: UnsafePointer<CChar>?
                let extraCode = sqlite3_prepare_v2(handle, rest, -1, &extra, &next)
                if extraCode != SQLITE_OK || extra != nil {
                    sqlite3_finalize(extra)
                    failure = ActiveObjectError.invalidSQL(
                        sql: sql, reason: "only one statement can be executed at a time")
                    return
                }
                if next == rest { break }
                tail = next
            }
        }
        if let failure {
            sqlite3_finalize(statement)
            throw failure
        }
        preparedStatementCount += 1
        return Statement(sqliteStatement: statement!, sql: sql, connection: self)
    }

    /// A statement for `source` from the bounded LRU cache, compiled on first use. A cached
    /// statement that is still being stepped (a nested identical query) is not handed out
    /// again: a fresh one is compiled instead, so the outer loop is not restarted.
    func cachedStatement<Source: StatementSource>(_ source: Source) throws -> Statement {
        useClock &+= 1
        let key = source.cacheKey
        if let entry = cache[key] {
            if entry.statement.isBusy { return try prepare(source.sql) }
            entry.lastUse = useClock
            return entry.statement
        }
        let capacity = options.statementCacheSize
        let statement = try prepare(source.sql, persistent: capacity > 0)
        guard capacity > 0 else { return statement }
        if cache.count >= capacity, let oldest = cache.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            // The evicted statement is finalized when its last user releases it.
            cache[oldest] = nil
        }
        cache[key] = CacheEntry(statement, lastUse: useClock, keyOwner: source.keyOwner)
        return statement
    }

    // MARK: Running

    /// Runs `body` with a bound statement, then resets it (also when `body` throws) so that no
    /// read transaction stays open, and reports the statement to the trace hook.
    func withStatement<Source: StatementSource, T>(
        _ source: Source, _ arguments: [DatabaseValue], _ body: (Statement) throws -> T
    ) throws -> T {
        try withStatement(source, binding: { try $0.bind(arguments) }, body)
    }

    /// ``withStatement(_:_:_:)`` with the parameters bound by `binding` (which must bind every
    /// one of them) instead of from an array. A statement whose binding fails never ran: it
    /// is reset, and not reported to the trace hook.
    func withStatement<Source: StatementSource, T>(
        _ source: Source, binding: (Statement) throws -> Void, _ body: (Statement) throws -> T
    ) throws -> T {
        let statement = try cachedStatement(source)
        do {
            try binding(statement)
        } catch {
            statement.reset()
            throw error
        }
        let start = options.traceHandler == nil ? 0 : DispatchTime.now().uptimeNanoseconds
        defer {
            statement.reset()
            if let trace = options.traceHandler {
                trace(statement.sql, DispatchTime.now().uptimeNanoseconds &- start)
            }
        }
        return try body(statement)
    }

    /// Executes a statement that returns no rows (rows, if any, are stepped through).
    func execute<Source: StatementSource>(_ sql: Source, _ arguments: [DatabaseValue] = []) throws {
        try withStatement(sql, arguments) { statement in
            while try statement.step() {}
        }
    }

    /// The first column of the first row, or nil when there is no row.
    func scalarValue<Source: StatementSource>(_ sql: Source, _ arguments: [DatabaseValue] = []) throws -> DatabaseValue? {
        try withStatement(sql, arguments) { statement in
            // `nil` must be spelled as Optional.none: DatabaseValue is ExpressibleByNilLiteral, so a
            // bare `nil` here would become `.some(.null)` and "no row" would look like a NULL row.
            try statement.step() ? statement.value(at: 0) : Optional<DatabaseValue>.none
        }
    }

    /// Every row, materialized.
    func rows(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> [Row] {
        try withStatement(sql, arguments) { statement in
            // Read the columns after the first step: a cached `SELECT *` is re-prepared by
            // `sqlite3_step` when another connection changed the schema, and only then shows
            // the new column set.
            var columns: RowColumns?
            var count: Int32 = 0
            var rows: [Row] = []
            while try statement.step() {
                if columns == nil {
                    columns = RowColumns(names: statement.columnNames)
                    count = statement.columnCount
                }
                guard let columns else { break }
                var values: [DatabaseValue] = []
                values.reserveCapacity(Int(count))
                for index in 0..<count { values.append(statement.value(at: index)) }
                rows.append(Row(columns: columns, values: values, context: valueContext))
            }
            return rows
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { sqliteConnection.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// The rowid of the last successful INSERT.
    var lastInsertRowID: Int64 { sqliteConnection.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// True when no transaction is open (SQLite's autocommit mode). After SQLITE_FULL,
    /// IOERR, BUSY or NOMEM, SQLite may have rolled the transaction back by itself.
    var isAutocommit: Bool { sqliteConnection.map { sqlite3_get_autocommit($0) != 0 } ?? true }


    /// Changes a run-time limit (`sqlite3_limit`); returns the previous value.
    @discardableResult
    func setLimit(_ limit: Int32, _ value: Int32) -> Int32 {
        sqliteConnection.map { sqlite3_limit($0, limit, value) } ?? 0
    }
}

/// How the statement cache finds a statement: by SQL text, or by the identity of a
/// ``SharedSQL`` (no string hashing on the hot paths of models).
enum StatementKey: Hashable {
    case text(String)
    case shared(ObjectIdentifier)
}

/// Something that can be compiled into a statement: SQL text, or a ``SharedSQL``.
protocol StatementSource {
    var sql: String { get }
    var cacheKey: StatementKey { get }
    /// The object whose identity the key is made of (kept alive by the cache), if any.
    var keyOwner: AnyObject? { get }
}

extension String: StatementSource {
    var sql: String { self }
    var cacheKey: StatementKey { .text(self) }
    var keyOwner: AnyObject? { nil }
}

/// SQL text built once and kept for the life of the program (a model's INSERT, find by id…),
/// cached by the identity of this object rather than by hashing its text on every call.
final class SharedSQL: StatementSource, Sendable {
    let sql: String
    init(_ sql: String) { self.sql = sql }
    var cacheKey: StatementKey { .shared(ObjectIdentifier(self)) }
    var keyOwner: AnyObject? { self }
}

/// What to undo in an object when the transaction that wrote it rolls back.
enum UndoEntry {
    /// The object was inserted: it becomes new again. Held weakly, so that a transaction
    /// inserting many objects does not keep them all alive.
    case forgetInsert(WeakObject)
    /// Anything else: restore the state captured by the closure.
    case run(() -> Void)
}

/// A weak reference, for the undo log.
struct WeakObject {
    weak var object: AnyObject?
}

/// An object whose insert can be forgotten after a rollback (ActiveObject, in the Model layer).
protocol InsertUndoable: AnyObject {
    func forgetInsert()
}
