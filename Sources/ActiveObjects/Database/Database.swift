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
/// - Reads outside a transaction (finders, queries, relations, and ``rows(_:_:)-8kx75`` and
///   ``scalar(_:_:)-3fqwy`` of read-only SQL) run on readers, concurrently with each other and
///   with the writer: a read never waits for a write transaction, and it sees every transaction
///   committed before it started (so a thread always reads its own writes). Raw SQL that
///   writes, or reads state only the writer connection has (`last_insert_rowid()`, `changes()`,
///   a `PRAGMA`), runs on the writer, exactly as with one connection; so may a raw read when
///   every reader is in use and the writer is free.
/// - ``read(_:)-54zpm`` runs several reads in one snapshot.
///
/// In-memory databases, `maximumReaderCount = 0` and the `.delete`/`.truncate` journal modes
/// use the one writer connection for everything.
public final class Database: @unchecked Sendable {
    // Safety of @unchecked Sendable: the stored properties are immutable or thread-safe
    // (atomics, locked values); the connections they lead to are only used by the thread an
    // ``Access`` lends them to (see Concurrency/Database+Access.swift and ARCHITECTURE.md).

    /// The path the database was opened with (`":memory:"` for in-memory databases).
    public let path: String
    /// The options the database was opened with.
    public let options: Options

    /// Gives the writer connection to one thread at a time.
    let writerGate: WriterGate
    /// The reader connections; nil when one connection serves everything.
    let readers: ReaderPool?
    /// The queues that run async calls' SQLite work.
    let background: BackgroundWork
    /// The live queries (see ``values(_:)``).
    let observations: ObservationCenter
    /// Whether each table (lowercased) has a rowid, as learned by ``tableHasRowID(_:)``;
    /// forgotten whenever a connection sees the schema change (``Connection/schemaChanged``).
    let tableLayouts: LockedValue<[String: Bool]>
    /// Set once raw SQL gave the writer state no reader has (`ATTACH`, a `TEMP` table, view,
    /// index or trigger): from then on a read that a reader cannot compile for want of a table
    /// or database runs again on the writer, which has it.
    let writerHoldsConnectionState = AtomicFlag()
    /// Set when ``close()`` begins: read by any thread with one atomic load.
    private let closed = AtomicFlag()

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
        // Models read from this database will be observable: learn, in the background, how
        // to tell an unobserved read in a few instructions (once per process).
        TrackingProbe.locateIfNeeded()
        // Every connection that sees the schema change — its own DDL (raw or not), a rollback
        // of one, or SQLite re-compiling a statement after another connection's or process's
        // DDL — makes the database look at table layouts again (a table recreated WITHOUT ROWID…).
        let layouts = LockedValue<[String: Bool]>([:])
        tableLayouts = layouts
        let forgetLayouts = { layouts.withLock { $0.removeAll() } }
        // One full-scan reporter for every connection: each SQL text is explained once.
        let fullScans = options.reportsFullScans.map { FullScanReporter($0) }
        let writer = try Connection(path: path, options: options, role: .writer, fullScanReporter: fullScans)
        writer.schemaChanged = forgetLayouts
        writerGate = WriterGate(connection: writer)
        if options.maximumReaderCount > 0 && writer.journalMode == "wal" {
            readers = ReaderPool(maximumCount: options.maximumReaderCount, serial: serial) {
                let reader = try Connection(path: path, options: options, role: .reader, fullScanReporter: fullScans)
                reader.schemaChanged = forgetLayouts
                return reader
            }
        } else {
            readers = nil
        }
        background = BackgroundWork(readWidth: options.maximumReaderCount)
        // Other connections can only write to a file: watch it while anything is observed.
        // The monitor reaches the writer only through a watch it is given (no reference back
        // to the center, which the writer's commit sink holds: see `breakReferenceCycles()`).
        let watched = writer.isInMemory ? [] : (writer.journalMode == "wal" ? [path, path + "-wal"] : [path])
        observations = ObservationCenter(watchedPaths: watched, gate: writerGate)
        writer.commitSink = observations
    }

    /// Opens a new, private in-memory database.
    /// - Throws: ``DatabaseError`` when SQLite cannot open it;
    ///   ``ActiveObjectError/invalidArgument(_:)`` for options out of range.
    public static func inMemory(options: Options = Options()) throws -> Database {
        try Database(path: ":memory:", options: options)
    }

    deinit {
        shutDown()
    }

    /// Closes the database. Idempotent. Never waits for a read in progress on a reader: idle readers and
    /// open cursors are closed at once (a cursor's `next()` then throws
    /// ``ActiveObjectError/databaseClosed``), and a walk (`each`) whose body is running is
    /// interrupted — its next step throws the same, and its reader closes when it returns;
    /// the next read of a ``read(_:)-54zpm`` block in progress throws too.
    /// Waits for what runs on the writer on another thread to end (a transaction; with one
    /// connection for everything, any read); a transaction another thread began with raw SQL
    /// and left open between its calls is not waited for: it is rolled back as the writer
    /// closes. Afterwards every call throws ``ActiveObjectError/databaseClosed``.
    ///
    /// - Throws: nothing today; declared `throws` so that a future failure to close can be reported.
    public func close() throws {
        shutDown()
    }

    /// Closes everything (see ``close()``), once.
    private func shutDown() {
        closed.set()
        observations.close()
        readers?.close()
        writer.lock.withLock { writer.closeNow() }
        background.stop()
        breakReferenceCycles()
    }

    /// The writer's callbacks lead back to what owns the writer (the observation center holds
    /// the gate for its monitor; the gate holds the writer): cut them once the writer is
    /// closed, so that every object of the database — and the user's `trace` closure — is
    /// freed with it.
    private func breakReferenceCycles() {
        writer.lock.withLock {
            writer.commitSink = nil
            writer.transactionListener = nil
        }
    }

    /// True once ``close()`` was called (or the database was deinitialized). Answers at once,
    /// whatever other threads are doing.
    public var isClosed: Bool { closed.isSet }

    /// Whether reads run on reader connections beside the writer (a file in WAL mode with
    /// ``Options/maximumReaderCount`` above 0).
    public var usesReaderConnections: Bool { readers != nil }

    /// The size, in bytes, a WAL file is trimmed back to once no reader needs its old content
    /// (SQLite's `journal_size_limit`): 4 MiB.
    public static let walSizeLimit = 4 * 1024 * 1024

    /// This database's number in per-thread bookkeeping that may outlive it (the facts of a
    /// thread's last write): unique in the process, unlike the object's address, which a later
    /// database may reuse.
    let serial = Database.serials.add(1)
    private static let serials = AtomicWord()

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

    // MARK: What the calling thread did

    /// The number of rows changed by the last INSERT, UPDATE or DELETE that **the calling
    /// thread** ran on this database (0 if none) — also one that failed after changing rows
    /// (`OR FAIL`). Another thread's writes do not change it. (Async calls run on the
    /// library's own threads: use the result they return instead.)
    public var changes: Int { ThreadState.current.changes(in: serial) }

    /// The rowid of the last row **the calling thread** inserted through this database (0
    /// when none), kept per thread like ``changes``: another thread's inserts do not change
    /// it, and an INSERT that SQLite ignored (`OR IGNORE`, a `RAISE(IGNORE)` trigger) leaves it
    /// as it was. Raw SQL's `last_insert_rowid()` answers the same.
    ///
    /// ```swift
    /// try db.execute("INSERT INTO note(body) VALUES (?)", ["hi"])
    /// let id = db.lastInsertedRowID
    /// ```
    public var lastInsertedRowID: Int64 { ThreadState.current.lastInsertedRowID(in: serial) }

    /// True while **the calling thread** is inside a ``transaction(_:)-8sgwh`` of this database (or
    /// a transaction it began with raw SQL). Never waits for another thread's transaction.
    /// False inside ``read(_:)-54zpm`` alone (its snapshot is a read transaction), whatever
    /// connection serves it.
    public var isInTransaction: Bool {
        let thread = ThreadState.current
        // The writer held by this thread (only close() on another thread may touch it
        // meanwhile), inside a `transaction`, or with a transaction open that no read block or
        // snapshot fetch of this thread began (with one connection, their snapshot is a
        // transaction on the writer).
        guard thread.hasScope(of: self, where: { $0.kind == .writer || $0.kind == .pinnedWriter }) else { return false }
        return writer.lock.withLock {
            // Inside `transaction` — unless SQLite already rolled it back (after SQLITE_FULL…).
            if writer.transactionDepth > 0 { return !writer.isAutocommit }
            if thread.hasScope(of: self, where: { $0.opensReadTransaction && $0.access.role == .writer }) { return false }
            return !writer.isAutocommit
        }
    }

    /// Prefix of the savepoints ``transaction(_:)`` creates for nested calls.
    static let savepointPrefix = "activeobjects_"
}
