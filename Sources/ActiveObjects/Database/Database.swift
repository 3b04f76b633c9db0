import Foundation

/// An SQLite database: raw SQL, transactions, and the home of your models.
///
/// ```swift
/// let db = try Database(path: "people.sqlite")     // created if missing
/// try db.execute("CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
/// try db.execute("INSERT INTO note(text) VALUES (?)", ["hello"])
/// let count: Int? = try db.scalar("SELECT count(*) FROM note")
/// ActiveObject.defaultDatabase = db
/// ```
///
/// `Database` is `Sendable`: use one instance from many threads and tasks. A file database in
/// WAL mode (the default) has one **writer** connection and up to
/// ``Options/maximumReaderCount`` **reader** connections, opened when first needed:
///
/// - Writes (``execute(_:_:)-93qp6``, object saves and deletes, class-level deletes) and
///   everything inside ``transaction(_:)-8sgwh`` run on the writer, one thread at a time.
/// - Reads outside a transaction (``rows(_:_:)-8kx75``, ``scalar(_:_:)-3fqwy``, finders, queries,
///   relations) run on readers, concurrently with each other and with the writer: a read
///   never waits for a write transaction, and it sees every transaction committed before it
///   started (so a thread always reads its own writes).
/// - ``read(_:)-54zpm`` runs several reads in one snapshot.
///
/// In-memory databases, `maximumReaderCount = 0` and the `.delete`/`.truncate` journal modes
/// use the one writer connection for everything.
public final class Database: @unchecked Sendable {
    // Safety of @unchecked Sendable: the stored properties are immutable; the connections
    // they lead to are only used under `WriterGate` (the writer) or while leased from the
    // `ReaderPool` (readers), and each connection's own lock guards closing.

    /// The path the database was opened with (`":memory:"` for in-memory databases).
    public let path: String
    /// The options the database was opened with.
    public let options: Options

    /// Gives the writer connection to one thread at a time.
    let writerGate: WriterGate
    /// The reader connections; nil when one connection serves everything.
    let readers: ReaderPool?
    /// Threads that run async calls: one for writes, a few for reads.
    let writerLane: WorkerLane
    let readerLane: WorkerLane
    /// The live queries (see ``values(_:)``).
    let observations: ObservationCenter
    /// Whether each table (lowercased) has a rowid, as learned by ``tableHasRowID(_:)``;
    /// forgotten whenever a connection sees the schema change (``Connection/schemaChanged``).
    let tableLayouts: LockedValue<[String: Bool]>
    /// Set once raw SQL gave the writer state no reader has (`ATTACH`, a `TEMP` table, view,
    /// index or trigger): from then on a read that a reader cannot compile for want of a table
    /// or database runs again on the writer, which has it.
    let writerHoldsConnectionState = AtomicFlag()

    /// The writer connection.
    var writer: Connection { writerGate.connection }

    /// Opens (creating if missing) the database file at `path`. `":memory:"` opens a private
    /// in-memory database.
    ///
    /// - Throws: ``DatabaseError`` — `cannotOpen` for a missing folder or a directory,
    ///   `notADatabase` for a file that is not SQLite (the file is left untouched);
    ///   ``ActiveObjectError/invalidArgument(_:)`` for options out of range (a negative or
    ///   absurd `maximumReaderCount`).
    public init(path: String, options: Options = Options()) throws {
        guard (0...Options.readerCountLimit).contains(options.maximumReaderCount) else {
            throw ActiveObjectError.invalidArgument(
                "maximumReaderCount must be between 0 and \(Options.readerCountLimit), got \(options.maximumReaderCount)")
        }
        self.path = path
        self.options = options
        // Every connection that sees the schema change — its own DDL (raw or not), a rollback
        // of one, or SQLite re-compiling a statement after another connection's or process's
        // DDL — makes the database look at table layouts again (a table recreated WITHOUT ROWID…).
        let layouts = LockedValue<[String: Bool]>([:])
        tableLayouts = layouts
        let forgetLayouts = { layouts.withLock { $0.removeAll() } }
        let writer = try Connection(path: path, options: options, role: .writer)
        writer.schemaChanged = forgetLayouts
        writerGate = WriterGate(connection: writer)
        if options.maximumReaderCount > 0 && writer.journalMode == "wal" {
            readers = ReaderPool(maximumCount: options.maximumReaderCount) {
                let reader = try Connection(path: path, options: options, role: .reader)
                reader.schemaChanged = forgetLayouts
                return reader
            }
        } else {
            readers = nil
        }
        writerLane = WorkerLane(name: "AO writer", maximumThreads: 1)
        readerLane = WorkerLane(name: "AO reader", maximumThreads: max(1, options.maximumReaderCount))
        // Other connections can only write to a file: watch it while anything is observed.
        let watched = writer.isInMemory ? [] : (writer.journalMode == "wal" ? [path, path + "-wal"] : [path])
        let gate = writerGate
        observations = ObservationCenter { onChange in
            guard !watched.isEmpty else { return nil }
            let watch = gate.startWatching(onChange: onChange)
            return ChangeMonitor(paths: watched, look: { gate.look(watch) }, onChange: onChange,
                                 onStop: { gate.stopWatching(watch) })
        }
        writer.commitSink = observations
    }

    /// Opens a new, private in-memory database.
    /// - Throws: ``DatabaseError`` when SQLite cannot open it;
    ///   ``ActiveObjectError/invalidArgument(_:)`` for options out of range.
    public static func inMemory(options: Options = Options()) throws -> Database {
        try Database(path: ":memory:", options: options)
    }

    deinit {
        observations.close()
        writerLane.stop()
        readerLane.stop()
        readers?.close()
        writer.lock.withLock { writer.closeNow() }
    }

    /// Closes the database. Idempotent. Never waits for a read in progress on a reader: idle readers and
    /// open cursors are closed at once (a cursor's `next()` then throws
    /// ``ActiveObjectError/databaseClosed``), and a walk (`each`) whose body is running is
    /// interrupted — its next step throws the same, and its reader closes when it returns;
    /// the next read of a ``read(_:)-54zpm`` block in progress throws too.
    /// Waits for what runs on the writer on another thread to end (a transaction; with one
    /// connection for everything, any read). Afterwards every call throws
    /// ``ActiveObjectError/databaseClosed``.
    ///
    /// - Throws: nothing today; declared `throws` so that a future failure to close can be reported.
    public func close() throws {
        observations.close()
        readers?.close()
        writer.lock.withLock { writer.closeNow() }
        writerLane.stop()
        readerLane.stop()
    }

    /// True once ``close()`` was called.
    public var isClosed: Bool { writer.lock.withLock { writer.sqliteConnection == nil } }

    /// Whether reads run on reader connections beside the writer (a file in WAL mode with
    /// ``Options/maximumReaderCount`` above 0).
    public var usesReaderConnections: Bool { readers != nil }

    /// The size, in bytes, a WAL file is trimmed back to once no reader needs its old content
    /// (SQLite's `journal_size_limit`): 4 MiB.
    public static let walSizeLimit = 4 * 1024 * 1024

    /// This database's identity in thread contexts.
    var identity: ObjectIdentifier { ObjectIdentifier(self) }

    /// The value context (date strategy) of this database.
    var valueContext: ValueContext { writer.valueContext }

    /// SQL arguments as bound values, encoded in `context` (the database's by default; a
    /// model's own date strategy for its queries); `nil` is NULL.
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` naming the argument that cannot be stored.
    func databaseValues(_ arguments: [(any ColumnValue)?], in context: ValueContext? = nil) throws -> [DatabaseValue] {
        let context = context ?? valueContext
        return try arguments.enumerated().map { index, value in
            do { return try value?.databaseValue(in: context) ?? .null } catch {
                throw ActiveObjectError.invalidArgument("argument \(index + 1): \(error)")
            }
        }
    }

    // MARK: Raw SQL

    /// Executes one SQL statement with `?` arguments bound in order, on the writer. A `nil`
    /// argument binds NULL.
    ///
    /// ```swift
    /// try db.execute("UPDATE person SET age = age + 1 WHERE id = ?", [42])
    /// try db.execute("UPDATE person SET rating = ? WHERE id = ?", [nil, 42])
    /// ```
    /// A raw `BEGIN` keeps the writer for this thread until the thread's `COMMIT` or
    /// `ROLLBACK` (other threads' writes wait); prefer ``transaction(_:)-8sgwh``.
    ///
    /// - Throws: ``DatabaseError`` from SQLite; ``ActiveObjectError/invalidSQL(sql:reason:)``
    ///   when `sql` holds more than one statement (none of it runs);
    ///   ``ActiveObjectError/invalidArgument(_:)`` for an argument that cannot be stored;
    ///   ``ActiveObjectError/misuse(_:)`` for `BEGIN`/`COMMIT`/`ROLLBACK` inside
    ///   ``transaction(_:)-8sgwh`` or a write inside ``read(_:)-54zpm``.
    public func execute(_ sql: String, _ arguments: [(any ColumnValue)?] = []) throws {
        let values = try databaseValues(arguments)
        try withWriter { connection in
            let statement = try connection.cachedStatement(sql)
            try checkRawStatement(statement, on: connection)
            // A statement that changes the schema makes the database look at table layouts
            // again (a table recreated WITHOUT ROWID…): see `Connection.schemaChanged`.
            try connection.withStatement(statement, binding: { try $0.bind(values) }) { statement in
                while try statement.step() {}
            }
            if statement.info.createsConnectionState { writerHoldsConnectionState.set() }
        }
    }

    /// ``execute(_:_:)-93qp6`` with the arguments labelled.
    ///
    /// ```swift
    /// try db.execute("UPDATE person SET age = ? WHERE id = ?", arguments: [31, 1])
    /// ```
    /// - Throws: as ``execute(_:_:)-93qp6``.
    public func execute(_ sql: String, arguments: [(any ColumnValue)?]) throws {
        try execute(sql, arguments)
    }

    /// Runs a query and returns all its rows. A statement that writes (`INSERT … RETURNING`)
    /// runs on the writer; any other on a reader.
    ///
    /// ```swift
    /// let rows = try db.rows("SELECT name, age FROM person WHERE age > ?", [30])
    /// let name: String = try rows[0]["name"]
    /// ```
    /// - Throws: as ``execute(_:_:)-93qp6``.
    public func rows(_ sql: String, _ arguments: [(any ColumnValue)?] = []) throws -> [Row] {
        let values = try databaseValues(arguments)
        return try withRawStatement(sql) { connection, statement in
            try connection.withStatement(statement, binding: { try $0.bind(values) }) { try connection.rows($0) }
        }
    }

    /// ``rows(_:_:)-8kx75`` with the arguments labelled.
    /// - Throws: as ``execute(_:_:)-93qp6``.
    public func rows(_ sql: String, arguments: [(any ColumnValue)?]) throws -> [Row] {
        try rows(sql, arguments)
    }

    /// The first column of the first row converted to `T`, or nil when there is no row or
    /// the value is NULL.
    ///
    /// ```swift
    /// let n: Int? = try db.scalar("SELECT count(*) FROM person")
    /// ```
    /// - Throws: ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)`` when
    ///   the value does not fit `T`; otherwise as ``execute(_:_:)-93qp6``.
    public func scalar<T: ColumnValue>(_ sql: String, _ arguments: [(any ColumnValue)?] = []) throws -> T? {
        let values = try databaseValues(arguments)
        let value = try withRawStatement(sql) { connection, statement in
            try connection.withStatement(statement, binding: { try $0.bind(values) }) { statement in
                try statement.step() ? statement.value(at: 0) : DatabaseValue.null
            }
        }
        guard !value.isNull else { return nil }
        guard let converted = T.fromDatabaseValue(value, in: valueContext) else {
            throw ActiveObjectError.typeMismatch(
                table: "(query result)", column: "1", rowID: nil,
                expected: String(describing: T.self), found: value.description)
        }
        return converted
    }

    /// ``scalar(_:_:)-3fqwy`` with the arguments labelled.
    /// - Throws: as ``scalar(_:_:)-3fqwy``.
    public func scalar<T: ColumnValue>(_ sql: String, arguments: [(any ColumnValue)?]) throws -> T? {
        try scalar(sql, arguments)
    }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE that **the calling
    /// thread** ran on this database (0 if none). Another thread's writes do not change it.
    /// (Async calls run on the library's own threads: use the result they return instead.)
    public var changes: Int { ThreadContext.current.changes(in: ObjectIdentifier(writer)) }

    /// True while **the calling thread** is inside a ``transaction(_:)-8sgwh`` of this database (or
    /// a transaction it began with raw SQL). Never waits for another thread's transaction.
    /// False inside ``read(_:)-54zpm`` alone (its snapshot is a read transaction), whatever
    /// connection serves it.
    public var isInTransaction: Bool {
        let context = ThreadContext.current
        guard writerGate.isHeld(by: context.token) else { return false }
        if let scope = context.readScope(for: identity), scope.forbidsWrites, scope.opensTransaction,
           scope.connection === writer {
            return false   // a read block's own deferred transaction on the one connection
        }
        return !writer.isAutocommit
    }

    // MARK: Raw statement checks

    /// Runs a raw statement on a reader, or on the writer when it writes or controls
    /// transactions (or when the thread is in a transaction, or one connection serves all).
    func withRawStatement<T>(_ sql: String, _ body: (Connection, Statement) throws -> T) throws -> T {
        var result: T?
        try withReader { connection in
            let statement: Statement
            do {
                statement = try connection.cachedStatement(sql)
            } catch let error as DatabaseError
                where connection.role == .reader && needsWriterState(error) && ThreadContext.current.readScope(for: identity) == nil {
                // It names a TEMP object or an attached database, which only the writer has
                // (the reader could not compile it: nothing ran). Run it there.
                return
            }
            if connection.role == .reader {
                let info = statement.info
                guard !info.writes && info.transactionControl == nil && statement.isReadOnly else { return }
            } else {
                try checkRawStatement(statement, on: connection)
            }
            result = try body(connection, statement)
        }
        if let result { return result }
        return try withWriter { connection in
            let statement = try connection.cachedStatement(sql)
            try checkRawStatement(statement, on: connection)
            defer { if statement.info.createsConnectionState { writerHoldsConnectionState.set() } }
            return try body(connection, statement)
        }
    }

    /// Refuses raw transaction statements that would break ``transaction(_:)``: `BEGIN`,
    /// `COMMIT` and `ROLLBACK` inside it, savepoints under the library's reserved names,
    /// `RELEASE`/`ROLLBACK TO` of a savepoint opened outside the body, and a raw `BEGIN` from
    /// an async call (its thread is not the caller's).
    private func checkRawStatement(_ statement: Statement, on connection: Connection) throws {
        guard let control = statement.info.transactionControl else { return }
        if connection.transactionDepth > 0 {
            switch control {
            case .begin, .commit, .rollback:
                throw ActiveObjectError.misuse(
                    "`\(statement.sql)` inside db.transaction { }: the transaction commits when its body returns and rolls back when it throws")
            case .savepoint(let name), .release(let name), .rollbackTo(let name):
                if name.lowercased().hasPrefix(Self.savepointPrefix) {
                    throw ActiveObjectError.misuse("savepoint names starting with \(Self.savepointPrefix) are reserved for db.transaction")
                }
                if !connection.mayRunInTransactionBody(control) {
                    throw ActiveObjectError.misuse(
                        "`\(statement.sql)` inside db.transaction { } names a savepoint the transaction's body did not open: it would end or undo the transaction behind its back")
                }
            }
        }
        if control == .begin && ThreadContext.current.isRunningAsyncJob {
            throw ActiveObjectError.misuse(
                "a raw BEGIN from an async call cannot keep its transaction: use `try await db.transaction { … }`")
        }
    }

    /// Prefix of the savepoints ``transaction(_:)`` creates for nested calls.
    static let savepointPrefix = "activeobjects_"

    // MARK: Connection access

    /// Runs `body` with a connection to read from: the writer when this thread holds it (in a
    /// transaction) or when one connection serves everything; the connection of this
    /// thread's open read scope; otherwise a leased reader.
    @inline(__always)
    func withReader<T>(_ body: (Connection) throws -> T) throws -> T {
        let context = ThreadContext.current
        guard let readers, !writerGate.isHeld(by: context.token) else {
            return try withWriterConnection(context, body)
        }
        if let scope = context.readScope(for: identity) {
            // A read block (or walk) in progress when close() ran: its next read fails.
            if readers.isShutDown { throw ActiveObjectError.databaseClosed }
            return try use(scope.connection, body)
        }
        let connection = try readers.lease(token: context.token, timeout: options.busyTimeoutNanoseconds)
        do {
            defer { readers.giveBack(connection) }
            return try use(connection, body)
        } catch let error as DatabaseError where error.resultCode == .interrupt && readers.isShutDown {
            // close() interrupted this read (a walk whose body was running).
            throw ActiveObjectError.databaseClosed
        }
    }

    /// Whether `error` is a reader's failure to compile a statement that names something only
    /// the writer has (a `TEMP` table, an attached database), once raw SQL created such state.
    private func needsWriterState(_ error: DatabaseError) -> Bool {
        guard writerHoldsConnectionState.isSet, error.resultCode == .error else { return false }
        return error.message.hasPrefix("no such table") || error.message.hasPrefix("no such view")
            || error.message.hasPrefix("unknown database")
    }

    /// True once ``close()`` has begun: the readers are closed (or closing), the writer too.
    var isShuttingDown: Bool { readers?.isShutDown ?? false || isClosed }

    /// ``withReader(_:)``, with the connection also serving every read `body` makes on this
    /// thread (one snapshot: a fetch and the relations it preloads agree).
    func withReadScope<T>(_ body: (Connection) throws -> T) throws -> T {
        try withReader { connection in try scoped(connection) { try body(connection) } }
    }

    /// Runs `body` with `connection` (a reader this thread uses) serving the thread's reads of
    /// this database. Writes stay allowed (they go to the writer).
    func scoped<T>(_ connection: Connection, _ body: () throws -> T) rethrows -> T {
        let context = ThreadContext.current
        guard connection.role == .reader, context.readScope(for: identity)?.connection !== connection else {
            return try body()
        }
        context.pushReadScope(.init(database: identity, connection: connection, forbidsWrites: false))
        defer { context.popReadScope() }
        return try body()
    }

    /// Runs `body` with the writer connection, waiting for another thread's transaction.
    /// - Throws: ``ActiveObjectError/misuse(_:)`` inside ``read(_:)``; ``DatabaseError``
    ///   `busy` after waiting longer than the busy timeout; ``ActiveObjectError/databaseClosed``.
    @inline(__always)
    func withWriter<T>(_ body: (Connection) throws -> T) throws -> T {
        let context = ThreadContext.current
        if let scope = context.readScope(for: identity), scope.forbidsWrites {
            throw ActiveObjectError.misuse("a write inside db.read { }: reads only there; use db.transaction { } to write")
        }
        return try withWriterConnection(context, body)
    }

    /// The writer, without the check for ``read(_:)`` blocks: for reads that must run on the
    /// writer (a cursor opened inside a transaction).
    @inline(__always)
    func withWriterConnection<T>(_ context: ThreadContext, timeout: Int64? = nil,
                                 _ body: (Connection) throws -> T) throws -> T {
        try writerGate.acquire(token: context.token, timeout: timeout ?? options.busyTimeoutNanoseconds)
        context.heldWriters += 1
        defer {
            context.heldWriters -= 1
            writerGate.release()
        }
        return try use(writer, body)
    }

    @inline(__always)
    func use<T>(_ connection: Connection, _ body: (Connection) throws -> T) throws -> T {
        connection.lock.lock()
        defer { connection.lock.unlock() }
        _ = try connection.checkOpen()
        return try body(connection)
    }

    /// The reader a cursor reads on: inside a read scope (``read(_:)``, a fetch's preloading),
    /// the scope's connection, borrowed (the cursor reads that snapshot and is closed when the
    /// scope ends); otherwise a reader leased for the cursor, which keeps it until it ends (its
    /// statement keeps a read transaction open). Nil when reads use the writer (one
    /// connection, or a transaction of this thread).
    func readerForCursor(_ cursor: any ScopeBoundCursor) throws -> (connection: Connection, leased: Bool)? {
        let context = ThreadContext.current
        guard let readers, !writerGate.isHeld(by: context.token) else { return nil }
        if let (scope, depth) = context.cursorScope(for: identity) {
            context.registerScopeCursor(cursor, depth: depth)
            return (scope.connection, false)
        }
        return (try readers.lease(token: context.token, timeout: options.busyTimeoutNanoseconds), true)
    }

    /// Gives back a reader leased with ``readerForCursor(_:)``.
    func giveBackCursorReader(_ connection: Connection) {
        readers?.giveBack(connection)
    }
}
