import CSQLite
import Foundation

/// One SQLite connection of a ``Database``: opening, configuration, the statement cache,
/// statement execution, and the bookkeeping of the transactions it runs.
///
/// Not thread-safe by itself: it is opened with `SQLITE_OPEN_NOMUTEX` (SQLite's per-call
/// mutex measured 1.27× slower on fetches) because one thread at a time uses it: the writer
/// through the database's ``WriterGate``, a reader while it is leased from the
/// ``ReaderPool``. `lock` is held for each use, so that closing the database from another
/// thread, or a statement released on another thread, waits for the use to end.
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
    /// The thread token of the reader's current lease holder (0 when idle); guarded by the
    /// ``ReaderPool``'s lock.
    @exclusivity(unchecked) var leaseHolder = 0
    /// The journal mode SQLite reports after configuration (`"wal"`, `"delete"`, `"memory"`…).
    @exclusivity(unchecked) private(set) var journalMode = ""

    /// Depth of nested ``Database/transaction(_:)`` levels (0 = none).
    @exclusivity(unchecked) private(set) var transactionDepth = 0
    /// The savepoints that raw `SAVEPOINT` statements opened on this connection (not those of
    /// ``Database/transaction(_:)``), innermost last (names lowercased, as SQLite compares
    /// them): the transaction level that opened each (0 outside ``Database/transaction(_:)``),
    /// and how many entries of `changes` preceded it. A raw `ROLLBACK TO` forgets the changes
    /// recorded since its savepoint began (a raw `RELEASE` keeps them); inside a transaction
    /// body, raw SQL may only release or roll back to the savepoints its own level opened.
    @exclusivity(unchecked) private var rawSavepoints: [(name: String, depth: Int, mark: Int)] = []
    /// Told when transaction levels begin and end (the Model layer's rollback log).
    @exclusivity(unchecked) var transactionListener: TransactionListener?

    /// Statements run since the last commit or rollback that changed rows or the schema.
    @exclusivity(unchecked) private var changes: [StatementInfo] = []
    /// For each open savepoint level, how many entries of `changes` preceded it.
    @exclusivity(unchecked) private var changeMarks: [Int] = []
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
    @exclusivity(unchecked) private var schemaCookieStatements: [OpaquePointer] = []
    /// The schema cookies this connection saw last (see ``currentSchemaCookie()``).
    @exclusivity(unchecked) private var seenSchemaCookie: Int64 = -1
    /// True while a schema change of the open transaction is not committed yet (a rollback
    /// undoes it: the schema changes again).
    @exclusivity(unchecked) private var uncommittedSchemaChange = false
    /// When set, every statement run records the tables it read here (live queries).
    @exclusivity(unchecked) var readRecorder: ReadRecorder?
    /// When set, every row stepped is hashed into it (live queries compare results).
    @exclusivity(unchecked) var fingerprint: ResultFingerprint?

    /// Receives the authorizer's reports while ``prepare(_:persistent:)`` compiles.
    @exclusivity(unchecked) fileprivate(set) var infoCollector: StatementInfoCollector?
    /// How many statements were compiled; tests use it to prove the cache works.
    @exclusivity(unchecked) private(set) var preparedStatementCount = 0
    /// The handles of the statements this connection compiled and has not finalized. Closing
    /// finalizes exactly these: SQLite's own statements (FTS5 keeps some) are SQLite's to
    /// finalize, and finalizing them too is a double free.
    @exclusivity(unchecked) private var liveStatements = Set<OpaquePointer>()
    /// The statement behind ``dataVersion()``.
    @exclusivity(unchecked) private var dataVersionStatement: OpaquePointer?
    @exclusivity(unchecked) private var cache: StatementCache

    init(path: String, options: Database.Options, role: Role) throws {
        self.path = path
        self.options = options
        self.role = role
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
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_set_authorizer(handle, statementAuthorizer, context)
        // The probe: opening a file that is not a database succeeds; the first read fails
        // with SQLITE_NOTADB. Read before anything writes, so such a file is left untouched.
        _ = try scalarValue("PRAGMA schema_version")
        // Readers too: they never write, but `PRAGMA foreign_keys` read on any connection
        // reports the database's option.
        activeobjects_set_foreign_keys(handle, options.foreignKeys ? 1 : 0)
        switch role {
        case .writer:
            // A rollback (ROLLBACK, or SQLite's own after an error) forgets the changes.
            sqlite3_rollback_hook(handle, { context in
                guard let context else { return }
                Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue().forgetChanges()
            }, context)
            if !options.readOnly && !isInMemory {
                _ = try scalarValue("PRAGMA journal_mode = \(options.journalMode.rawValue)")
            }
            if case .text(let mode)? = try scalarValue("PRAGMA journal_mode") { journalMode = mode.lowercased() }
            if journalMode == "wal" {
                // A WAL that grew while long readers held back checkpoints is trimmed back to
                // this size when it is next reset (https://www.sqlite.org/pragma.html#pragma_journal_size_limit).
                _ = try scalarValue("PRAGMA journal_size_limit = \(Database.walSizeLimit)")
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
    func prepare(_ sql: String, persistent: Bool = false) throws -> Statement {
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
    private func schemaChanged(since statement: Statement) -> Bool {
        guard let cookie = currentSchemaCookie() else { return true }
        if cookie != seenSchemaCookie {
            seenSchemaCookie = cookie
            schemaChanged?()
        }
        return cookie != statement.infoCookie
    }

    /// A statement for `source` from the bounded LRU cache, compiled on first use. A cached
    /// statement that is still being stepped (a nested identical query) is not handed out
    /// again: a fresh one is compiled instead, so the outer loop is not restarted.
    func cachedStatement<Source: StatementSource>(_ source: Source) throws -> Statement {
        let key = source.cacheKey
        if let statement = cache.statement(for: key) {
            return statement.isBusy ? try prepare(source.sql) : statement
        }
        let statement = try prepare(source.sql, persistent: cache.capacity > 0)
        cache.insert(statement, for: key, keyOwner: source.keyOwner)
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
        try withStatement(try cachedStatement(source), binding: binding, body)
    }

    /// The same, with a statement already compiled on this connection.
    func withStatement<T>(
        _ statement: Statement, binding: (Statement) throws -> Void, _ body: (Statement) throws -> T
    ) throws -> T {
        do {
            try binding(statement)
        } catch {
            statement.reset()
            throw error
        }
        let start = options.traceHandler == nil ? 0 : DispatchTime.now().uptimeNanoseconds
        var info = statement.info
        let changesBefore = info.writes ? totalChanges : 0
        let recompilesBefore = automaticRecompiles
        readRecorder?.record(info)
        defer {
            statement.reset()
            if let trace = options.traceHandler {
                trace(statement.sql, DispatchTime.now().uptimeNanoseconds &- start)
            }
        }
        let result: T
        do {
            result = try body(statement)
        } catch {
            // Recompiled, then failed: the next run will not recompile, so learn it now.
            if automaticRecompiles != recompilesBefore && schemaChanged(since: statement) { _ = relearnInfo(of: statement) }
            throw error
        }
        if automaticRecompiles != recompilesBefore && schemaChanged(since: statement) {
            // SQLite compiled the statement again (the schema changed): what it reads and
            // writes may have changed too (a trigger added, a view redefined).
            info = relearnInfo(of: statement)
            readRecorder?.record(info)
        }
        if info.writes {
            if (totalChanges != changesBefore || info.changesSchema) && changes.last !== info { changes.append(info) }
            // `Database.changes` is per thread.
            ThreadContext.current.recordChanges(lastChanges, in: ObjectIdentifier(self))
        }
        if info.changesSchema {
            if !isAutocommit { uncommittedSchemaChange = true }
            schemaChanged?()
        }
        if let control = info.transactionControl { transactionStatementRan(control) }
        // No transaction left open after a write or COMMIT: the changes are committed.
        if !changes.isEmpty && (info.writes || info.transactionControl != nil) && isAutocommit { publishCommit() }
        return result
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

    /// Every row of a statement, materialized.
    func rows(_ statement: Statement) throws -> [Row] {
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

    /// Every row, materialized.
    func rows(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> [Row] {
        try withStatement(sql, arguments) { try rows($0) }
    }

    /// What `statement` reads and writes under the current schema, learned by compiling its SQL
    /// once more with the collector (the statement itself keeps running the program SQLite
    /// re-compiled), and kept as its new ``Statement/info``. Statements that change the
    /// schema keep theirs (compiling `CREATE TABLE t` again after it ran would fail).
    private func relearnInfo(of statement: Statement) -> StatementInfo {
        guard !statement.info.changesSchema, let handle = sqliteConnection else { return statement.info }
        statement.infoCookie = currentSchemaCookie() ?? -1
        let collector = StatementInfoCollector()
        var probe: OpaquePointer?
        let code = collecting(into: collector) {
            statement.sql.withCString { sqlite3_prepare_v3(handle, $0, -1, 0, &probe, nil) }
        }
        sqlite3_finalize(probe)
        guard code == SQLITE_OK, probe != nil else { return statement.info }
        let info = collector.build()
        statement.info = info
        return info
    }

    /// Runs `body` (a compilation of our own) with the authorizer's reports going to
    /// `collector`, then restores the collector in place before.
    private func collecting<T>(into collector: StatementInfoCollector, _ body: () -> T) -> T {
        let outer = infoCollector
        infoCollector = collector
        defer { infoCollector = outer }
        return body()
    }

    /// `PRAGMA data_version`: changes when another connection commits. Read with a statement
    /// of its own, not reported to the trace hook (the live-query monitor polls it).
    ///
    /// Nil (no look now; the monitor looks again shortly) while a transaction is open on the
    /// connection in WAL mode — a cursor left open on a single-connection database keeps its
    /// read transaction without holding the writer — since the version is then that
    /// snapshot's, and a look would take it as the baseline and hide the commits after it.
    /// (In the rollback-journal modes an open read transaction keeps other connections from
    /// committing, so its version is current.)
    func dataVersion() -> Int64? {
        guard let handle = sqliteConnection else { return nil }
        if journalMode == "wal" && sqlite3_txn_state(handle, nil) != SQLITE_TXN_NONE { return nil }
        if dataVersionStatement == nil {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, "PRAGMA data_version", -1, &statement, nil) == SQLITE_OK, let statement else {
                return nil
            }
            liveStatements.insert(statement)
            dataVersionStatement = statement
        }
        guard let statement = dataVersionStatement else { return nil }
        // Never wait for another process's lock (a rollback-journal file being written): the
        // look runs on a committing thread or the monitor's, and is simply made again later.
        sqlite3_busy_timeout(handle, 0)
        defer {
            sqlite3_reset(statement)
            sqlite3_busy_timeout(handle, Int32(clamping: options.busyTimeoutNanoseconds / 1_000_000))
        }
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return sqlite3_column_int64(statement, 0)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE of this connection.
    var lastChanges: Int { sqliteConnection.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// Rows changed since the connection opened (triggers and foreign-key actions included).
    var totalChanges: Int32 { sqliteConnection.map { sqlite3_total_changes($0) } ?? 0 }

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

    /// Asks a running statement of this connection to stop (`sqlite3_interrupt`); callable
    /// from any thread while the connection is open.
    func interrupt() {
        if let handle = sqliteConnection { sqlite3_interrupt(handle) }
    }

    // MARK: Transaction levels and changes

    /// A ``Database/transaction(_:)`` level began (BEGIN or SAVEPOINT ran).
    func beginLevel() {
        transactionDepth += 1
        changeMarks.append(changes.count)
        transactionListener?.transactionLevelBegan(depth: transactionDepth)
    }

    /// The innermost level committed (COMMIT or RELEASE ran).
    func commitLevel() {
        let depth = transactionDepth
        forgetRawSavepoints(from: depth)
        transactionDepth -= 1
        changeMarks.removeLast()
        transactionListener?.transactionLevelCommitted(depth: depth)
    }

    /// The innermost level rolled back (ROLLBACK or ROLLBACK TO ran, or SQLite rolled back).
    func rollBackLevel() {
        let depth = transactionDepth
        forgetRawSavepoints(from: depth)
        transactionDepth -= 1
        if let mark = changeMarks.popLast(), mark < changes.count { changes.removeSubrange(mark...) }
        if uncommittedSchemaChange { schemaChanged?() }
        transactionListener?.transactionLevelRolledBack(depth: depth)
    }

    /// Whether raw SQL inside a transaction body may run `control`: it may open savepoints, and
    /// release or roll back to those its own level opened. Releasing (or rolling back to) a
    /// savepoint opened *outside* the body — before the transaction, or by an enclosing level —
    /// would end or undo the library's transaction behind its back (a `RELEASE` of an
    /// enclosing savepoint commits it).
    func mayRunInTransactionBody(_ control: TransactionControl) -> Bool {
        switch control {
        case .release(let name), .rollbackTo(let name):
            guard let index = rawSavepointIndex(named: name) else { return false }
            return rawSavepoints[index].depth == transactionDepth
        case .savepoint, .begin, .commit, .rollback:
            return true
        }
    }

    /// A transaction statement ran (successfully): keeps the raw savepoints up to date. A raw
    /// `ROLLBACK TO` forgets the changes recorded since its savepoint began, so that a commit
    /// reports only what it kept. The library's own savepoints are handled by the levels.
    private func transactionStatementRan(_ control: TransactionControl) {
        switch control {
        case .savepoint(let name):
            let key = name.lowercased()
            guard !key.hasPrefix(Database.savepointPrefix) else { return }
            rawSavepoints.append((key, transactionDepth, changes.count))
        case .release(let name):
            guard let index = rawSavepointIndex(named: name) else { return }
            rawSavepoints.removeSubrange(index...)
        case .rollbackTo(let name):
            guard let index = rawSavepointIndex(named: name) else { return }
            // The savepoint stays open; those opened after it are gone.
            rawSavepoints.removeSubrange((index + 1)...)
            let mark = rawSavepoints[index].mark
            if mark < changes.count { changes.removeSubrange(mark...) }
            if uncommittedSchemaChange { schemaChanged?() }
        case .commit, .rollback:
            rawSavepoints.removeAll()
            uncommittedSchemaChange = false
        case .begin:
            break
        }
    }

    /// The innermost raw savepoint named `name` (SQLite compares names case-insensitively);
    /// nil for none, and for the library's own savepoints (the levels handle those).
    private func rawSavepointIndex(named name: String) -> Int? {
        let key = name.lowercased()
        guard !key.hasPrefix(Database.savepointPrefix) else { return nil }
        return rawSavepoints.lastIndex { $0.name == key }
    }

    /// A transaction level ended: the raw savepoints opened in it ended with it.
    private func forgetRawSavepoints(from depth: Int) {
        if let last = rawSavepoints.last, last.depth >= depth {
            rawSavepoints.removeAll { $0.depth >= depth }
        }
    }

    /// Tells the commit sink what the commit changed, and forgets it.
    func publishCommit() {
        uncommittedSchemaChange = false
        guard !changes.isEmpty else { return }
        if let commitSink, commitSink.isObserving { commitSink.committed(changes) }
        changes.removeAll(keepingCapacity: true)
    }

    /// A rollback happened: the changes since the last commit are gone.
    fileprivate func forgetChanges() {
        changes.removeAll(keepingCapacity: true)
        changeMarks = changeMarks.map { _ in 0 }
        rawSavepoints.removeAll()
        if uncommittedSchemaChange {
            uncommittedSchemaChange = false
            schemaChanged?()
        }
    }
}

/// Told about the transaction levels of the writer connection, so that the layers above can
/// keep state per level (the Model layer's rollback log restores objects). Called on the
/// thread that runs the transaction, while it holds the writer.
protocol TransactionListener: AnyObject {
    func transactionLevelBegan(depth: Int)
    func transactionLevelCommitted(depth: Int)
    func transactionLevelRolledBack(depth: Int)
}

/// Receives the writer's commits (the live-query center).
protocol CommitSink: AnyObject {
    /// Whether anyone listens; when false, commits are not reported (no work per commit).
    var isObserving: Bool { get }
    /// A commit happened; `statements` changed rows or the schema. Must not keep the array.
    func committed(_ statements: [StatementInfo])
}

/// Gathers the tables read by the statements a connection runs while it is set (the reads
/// of an observed fetch).
final class ReadRecorder {
    private(set) var tables = Set<String>()
    private var last: StatementInfo?

    func record(_ info: StatementInfo) {
        guard info !== last else { return }
        last = info
        tables.formUnion(info.readTables)
    }
}
