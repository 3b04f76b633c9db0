import CSQLite
import Foundation

/// One SQLite connection of a ``Database``: opening, configuration, the statement cache
/// (this file); running statements (`Connection+Running.swift`); the bookkeeping of the
/// transactions it runs and the commits it publishes (`Connection+Transactions.swift`); the C
/// callbacks SQLite calls (`Connection+Hooks.swift`). The only type, with ``Statement``, that
/// calls `sqlite3_*`.
///
/// Not thread-safe by itself: it is opened with `SQLITE_OPEN_NOMUTEX` (SQLite's per-call
/// mutex measured 1.27× slower on fetches) because one thread at a time uses it: the writer
/// while a thread holds the database's ``WriterGate``, a reader while it is leased from the
/// ``ReaderPool`` (see ``Access``). `lock` is held for each use, so that closing the database
/// from another thread, or a statement released on another thread, waits for the use to end.
final class Connection {
    enum Role { case writer, reader }

    /// Held while the connection is used; recursive, so that a thread may nest uses.
    let lock = NSRecursiveLock()
    /// The C handle; nil once closed.
    @exclusivity(unchecked) private(set) var sqliteConnection: OpaquePointer?
    let path: String
    let options: Database.Options
    let role: Role
    let valueContext: ValueContext
    /// For a reader, its slot in the ``ReaderPool`` (-1 for a temporary extra connection);
    /// set once, before the connection is first leased.
    @exclusivity(unchecked) var readerSlot = -1
    /// For a temporary extra reader, the thread it was opened for (guarded by the pool's lock).
    @exclusivity(unchecked) var temporaryHolder: ObjectIdentifier?
    /// The journal mode SQLite reports after configuration (`"wal"`, `"delete"`, `"memory"`…).
    @exclusivity(unchecked) private(set) var journalMode = ""

    /// Depth of nested ``Database/transaction(_:)`` levels (0 = none).
    @exclusivity(unchecked) var transactionDepth = 0
    /// The savepoints that raw `SAVEPOINT` statements opened on this connection (not those of
    /// ``Database/transaction(_:)``), innermost last (names lowercased, as SQLite compares
    /// them): the transaction level that opened each (0 outside ``Database/transaction(_:)``),
    /// and how many entries of `changes` preceded it. A raw `ROLLBACK TO` forgets the changes
    /// recorded since its savepoint began (a raw `RELEASE` keeps them); inside a transaction
    /// body, raw SQL may only release or roll back to the savepoints its own level opened.
    @exclusivity(unchecked) var rawSavepoints: [(name: String, depth: Int, mark: Int)] = []
    /// Told when transaction levels begin and end (the Model layer's rollback log).
    @exclusivity(unchecked) var transactionListener: TransactionListener?

    /// Statements run since the last commit or rollback that changed rows or the schema.
    @exclusivity(unchecked) var changes: [StatementInfo] = []
    /// For each open savepoint level, how many entries of `changes` preceded it.
    @exclusivity(unchecked) var changeMarks: [Int] = []
    /// How many INSERT, UPDATE or DELETE statements ran (also those that failed after changing
    /// rows): an access compares it before and after to know whether it wrote, and so whether
    /// ``lastChanges`` and ``lastInsertRowID`` are its own.
    @exclusivity(unchecked) var writeCount = 0
    /// Told about each commit, with the statements that changed something. Runs on the thread
    /// that committed, with the connection still in use: it must not use the database.
    @exclusivity(unchecked) var commitSink: CommitSink?
    /// Called when this connection saw the schema change: it ran a statement that changes it
    /// (or rolled one back), or SQLite re-compiled a statement by itself (after a change made
    /// by any connection or process). Runs with the connection in use: it must not use the
    /// database. The database forgets the table layouts it learned.
    @exclusivity(unchecked) var schemaChanged: (() -> Void)?
    /// How many authorizer reports arrived outside our prepares: SQLite re-compiling a
    /// statement by itself (see ``statementAuthorizer``). Compared before and after a
    /// statement runs; when it moved, the schema cookies tell whether the schema really
    /// changed (SQLite also re-compiles a statement whose bound `LIKE` pattern may change its
    /// plan, and table-valued pragmas compile SQL as they run).
    @exclusivity(unchecked) var automaticRecompiles = 0
    /// The statements reading the schema cookies of the main and temp databases (compiled on
    /// first use, finalized on close).
    @exclusivity(unchecked) var schemaCookieStatements: [OpaquePointer] = []
    /// The schema cookies this connection saw last (see ``currentSchemaCookie()``).
    @exclusivity(unchecked) var seenSchemaCookie: Int64 = -1
    /// True while a schema change of the open transaction is not committed yet (a rollback
    /// undoes it: the schema changes again).
    @exclusivity(unchecked) var uncommittedSchemaChange = false
    /// The rows changed since the last commit or rollback, while live results want them
    /// (`Connection+RowChanges.swift`).
    @exclusivity(unchecked) var rowLog = RowChangeLog()
    /// When set, every statement run records the tables it read here (live queries).
    @exclusivity(unchecked) var readRecorder: ReadRecorder?
    /// When set, every row stepped is hashed into it (live queries compare results).
    @exclusivity(unchecked) var fingerprint: ResultFingerprint?

    /// Receives the authorizer's reports while ``prepare(_:persistent:)`` compiles.
    @exclusivity(unchecked) var infoCollector: StatementInfoCollector?
    /// How many statements were compiled; tests use it to prove the cache works.
    @exclusivity(unchecked) private(set) var preparedStatementCount = 0
    /// The database's ``Database/Options/reportsFullScans`` reporter, shared by all its
    /// connections; nil without the option.
    let fullScanReporter: FullScanReporter?
    /// How many plans ``explainQueryPlan(_:)`` asked for; tests use it to prove that nothing is
    /// explained without the option, and each SQL text once with it.
    @exclusivity(unchecked) var explainedPlanCount = 0
    /// The handles of the statements this connection compiled and has not finalized. Closing
    /// finalizes exactly these: SQLite's own statements (FTS5 keeps some) are SQLite's to
    /// finalize, and finalizing them too is a double free.
    @exclusivity(unchecked) var liveStatements = Set<OpaquePointer>()
    /// The statement behind ``dataVersion()``.
    @exclusivity(unchecked) var dataVersionStatement: OpaquePointer?
    @exclusivity(unchecked) private var cache: StatementCache

    init(path: String, options: Database.Options, role: Role, fullScanReporter: FullScanReporter? = nil) throws {
        self.path = path
        self.options = options
        self.role = role
        self.fullScanReporter = fullScanReporter
        self.valueContext = ValueContext(dateStrategy: options.dateStrategy)
        self.cache = StatementCache(capacity: options.statementCacheSize)
        // A directory opens read-only without complaint and then fails every read with an
        // I/O error: refuse it up front with the same error as a read-write open.
        var isDirectory: ObjCBool = false
        if !path.hasPrefix("file:"), FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
           isDirectory.boolValue {
            throw DatabaseError(extendedResultCode: .cannotOpen, message: "cannot open \(path): it is a directory")
        }
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        if options.readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            // Readers never create the file: the writer did.
            flags |= role == .writer ? (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) : SQLITE_OPEN_READWRITE
        }
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

    /// Whether the database lives in memory (no file other connections could write).
    var isInMemory: Bool {
        path == ":memory:" || path.isEmpty || path.hasPrefix("file::memory:") || path.contains("mode=memory")
    }

    private func configure(_ handle: OpaquePointer) throws {
        sqlite3_extended_result_codes(handle, 1)
        // Double-quoted string literals would turn a misspelled "column" into a string.
        activeobjects_set_dqs_dml(handle, 0)
        activeobjects_set_dqs_ddl(handle, 0)
        sqlite3_busy_timeout(handle, Int32(clamping: options.busyTimeoutNanoseconds / 1_000_000))
        installHooks(handle)
        // The probe: opening a file that is not a database succeeds; the first read fails
        // with SQLITE_NOTADB. Read before anything writes, so such a file is left untouched.
        _ = try scalarValue("PRAGMA schema_version")
        // Readers too: they never write, but `PRAGMA foreign_keys` read on any connection
        // reports the database's option.
        activeobjects_set_foreign_keys(handle, options.foreignKeys ? 1 : 0)
        switch role {
        case .writer:
            if !options.readOnly && !isInMemory {
                _ = try scalarValue("PRAGMA journal_mode = \(options.journalMode.rawValue)")
            }
            if case .text(let mode)? = try scalarValue("PRAGMA journal_mode") { journalMode = mode.lowercased() }
            if !options.readOnly && !isInMemory {
                // Explicit, whatever the SQLite build's default: a commit that returned is on
                // the disk (.full) — what a server, or Litestream shipping the WAL, relies on.
                try execute(options.durability == .full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
            }
            if journalMode == "wal" {
                // A WAL that grew while long readers held back checkpoints is trimmed back to
                // this size when it is next reset (https://www.sqlite.org/pragma.html#pragma_journal_size_limit).
                _ = try scalarValue("PRAGMA journal_size_limit = \(Database.walSizeLimit)")
                // SQLite's automatic checkpoints are PASSIVE: they never wait for a reader, and
                // never restart the WAL under one (Litestream holds a read transaction for that).
                if !options.checkpointsAutomatically { sqlite3_wal_autocheckpoint(handle, 0) }
            }
        case .reader:
            // A write on a reader is SQLite's readOnly error, never a silent success.
            try execute("PRAGMA query_only = 1")
            journalMode = "wal"
        }
    }

    /// Finalizes every statement, then closes. Safe to call twice.
    func closeNow() {
        guard let handle = sqliteConnection else { return }
        cache.finalizeAll()
        // Statements still held elsewhere (an open cursor) are finalized here too; their
        // objects see the connection closed and throw `databaseClosed` on use.
        for statement in liveStatements { sqlite3_finalize(statement) }
        liveStatements.removeAll()
        schemaCookieStatements.forEach { sqlite3_finalize($0) }
        schemaCookieStatements = []
        sqlite3_close(handle)
        sqliteConnection = nil
    }

    /// Finalizes one of this connection's statements.
    func finalize(_ statement: OpaquePointer) {
        guard sqliteConnection != nil, liveStatements.remove(statement) != nil else { return }
        sqlite3_finalize(statement)
    }

    func checkOpen() throws -> OpaquePointer {
        guard let handle = sqliteConnection else { throw ActiveObjectError.databaseClosed }
        return handle
    }

    // MARK: Preparing

    /// Compiles exactly one statement. SQL after the first statement (other than whitespace
    /// and comments) is refused, never executed: `sqlite3_exec` would run it.
    ///
    /// With `checksPlan` (the default) and a ``fullScanReporter``, the reporter then checks the
    /// statement's plan, once per SQL text and database: callers pass false only for SQL
    /// checked already (a cached statement compiled again while busy).
    func prepare(_ sql: String, persistent: Bool = false, checksPlan: Bool = true) throws -> Statement {
        let handle = try checkOpen()
        var statement: OpaquePointer?
        var failure: Error?
        let flags = UInt32(persistent ? SQLITE_PREPARE_PERSISTENT : 0)
        let collector = StatementInfoCollector()
        infoCollector = collector
        sql.withCString { start in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(handle, start, -1, flags, &statement, &tail)
            // Only the first statement's reports count.
            infoCollector = nil
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
        infoCollector = nil
        if let failure {
            sqlite3_finalize(statement)
            throw failure
        }
        preparedStatementCount += 1
        liveStatements.insert(statement!)
        let prepared = Statement(sqliteStatement: statement!, sql: sql, info: collector.build(), connection: self)
        prepared.infoCookie = currentSchemaCookie() ?? -1
        if let fullScanReporter, checksPlan { fullScanReporter.check(prepared, on: self) }
        return prepared
    }

    /// The schema cookies of the main and temp databases as one number (each changes whenever
    /// any connection or process changes that schema), or nil when they cannot be read.
    func currentSchemaCookie() -> Int64? {
        guard let handle = sqliteConnection else { return nil }
        if schemaCookieStatements.isEmpty {
            // Our own compilation: the authorizer's reports must not count as a re-compile.
            let prepared = collecting(into: StatementInfoCollector()) {
                ["PRAGMA main.schema_version", "PRAGMA temp.schema_version"].compactMap { sql -> OpaquePointer? in
                    var statement: OpaquePointer?
                    return sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK
                        ? statement : nil
                }
            }
            guard prepared.count == 2 else {
                prepared.forEach { sqlite3_finalize($0) }
                return nil
            }
            schemaCookieStatements = prepared
        }
        var cookie: Int64 = 0
        for statement in schemaCookieStatements {
            defer { sqlite3_reset(statement) }
            guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
            cookie = cookie << 32 | (sqlite3_column_int64(statement, 0) & 0xFFFF_FFFF)
        }
        return cookie
    }

    /// Whether the schema changed since `statement`'s ``Statement/info`` was learned, after
    /// SQLite re-compiled something. Also tells ``schemaChanged`` once per change seen.
    func schemaChanged(since statement: Statement) -> Bool {
        guard let cookie = currentSchemaCookie() else { return true }
        if cookie != seenSchemaCookie {
            seenSchemaCookie = cookie
            schemaChanged?()
        }
        return cookie != statement.infoCookie
    }

    /// A statement for `source` from the bounded LRU cache, compiled on first use. A cached
    /// statement that is still being stepped (a nested identical query) is not handed out
    /// again: a fresh one is compiled instead, so the outer loop is not restarted. Only a miss
    /// has its plan checked (``fullScanReporter``): a hit's SQL was checked when it was cached.
    func cachedStatement<Source: StatementSource>(_ source: Source) throws -> Statement {
        let key = source.cacheKey
        if let statement = cache.statement(for: key) {
            return statement.isBusy ? try prepare(source.sql, checksPlan: false) : statement
        }
        let statement = try prepare(source.sql, persistent: cache.capacity > 0)
        cache.insert(statement, for: key, keyOwner: source.keyOwner)
        return statement
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE of this connection.
    var lastChanges: Int { sqliteConnection.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// Rows changed since the connection opened (triggers and foreign-key actions included).
    var totalChanges: Int32 { sqliteConnection.map { sqlite3_total_changes($0) } ?? 0 }

    /// The rowid of the last row inserted by a top-level INSERT (`sqlite3_last_insert_rowid`).
    /// Set by the routing at the start of each writer access to the calling thread's own last
    /// insert (`sqlite3_set_last_insert_rowid`), so that `last_insert_rowid()` and
    /// ``Database/lastInsertedRowID`` answer per thread, as with a connection of its own.
    var lastInsertRowID: Int64 {
        get { sqliteConnection.map { sqlite3_last_insert_rowid($0) } ?? 0 }
        set { if let handle = sqliteConnection { sqlite3_set_last_insert_rowid(handle, newValue) } }
    }

    /// True when no transaction is open (SQLite's autocommit mode). After SQLITE_FULL,
    /// IOERR, BUSY or NOMEM, SQLite may have rolled the transaction back by itself.
    var isAutocommit: Bool { sqliteConnection.map { sqlite3_get_autocommit($0) != 0 } ?? true }

    /// Changes a run-time limit (`sqlite3_limit`); returns the previous value.
    @discardableResult
    func setLimit(_ limit: Int32, _ value: Int32) -> Int32 {
        sqliteConnection.map { sqlite3_limit($0, limit, value) } ?? 0
    }

    /// Asks a running statement of this connection to stop (`sqlite3_interrupt`); callable
    /// from any thread while the connection is open.
    func interrupt() {
        if let handle = sqliteConnection { sqlite3_interrupt(handle) }
    }
}
