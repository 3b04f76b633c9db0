import Foundation

/// Pulls the objects of a query one at a time, so that any number of rows can be walked in
/// constant memory.
///
/// ```swift
/// let cursor = try Person.where(\.$active == true).cursor()
/// while let person = try cursor.next() { print(person.name) }
/// ```
///
/// A cursor reads one snapshot: it keeps a reader connection (and its read transaction)
/// until it is exhausted, closed or released, while other threads use the database. Opened
/// inside ``Database/read(_:)-54zpm``, it reads that block's snapshot on its connection, on
/// the block's thread only, and is closed when the block ends. In WAL
/// mode an open read transaction holds back checkpoints: call ``close()`` or drop the cursor
/// when you stop early. (Opened inside a transaction, or when one connection serves
/// everything, it reads on the writer, taking it for each `next()`.) Closing the database
/// finalizes open cursors; their `next()` then throws ``ActiveObjectError/databaseClosed``.
public final class Cursor<Model: ActiveObject>: ScopeBoundCursor {
    private let database: Database
    /// Where it reads (see ``CursorPlacement``): nil only while the initializer runs.
    private var placement: CursorPlacement?
    /// Set when the read block the cursor was opened in ended before the cursor did.
    private var outlivedItsScope = false
    /// True when the cursor began a read transaction of its own on its leased reader (see `init`).
    private var ownsReadTransaction = false
    private var statement: Statement?
    private let loader: ObjectLoader
    /// Eager loading of the query's relations, for a batch of objects (nil without `including`).
    private let preload: (([Model], Access) throws -> Void)?
    private let batchSize: Int
    /// Objects read ahead and preloaded; those from `nextPending` on are not returned yet.
    private var pending: [ActiveObject] = []
    private var nextPending = 0
    /// When the cursor started, for the trace hook (reported when it closes).
    private let start = DispatchTime.now().uptimeNanoseconds

    init(sql: String, arguments: [DatabaseValue], schema: ModelSchema, database: Database, context: ValueContext,
         preload: (([Model], Access) throws -> Void)? = nil, batchSize: Int = 1) throws {
        self.database = database
        self.preload = preload
        self.batchSize = Swift.max(1, batchSize)
        loader = ObjectLoader(canonicalFor: schema, context: context)
        placement = try database.placeCursor(self)
        // A cursor owns its own statement (never a cached one): it stays open across calls.
        do {
            statement = try withAccess { access in
                // With `including`, its own read transaction, so that the relations of the last
                // batch — loaded after the statement's last step — come from the same snapshot.
                if preload != nil, case .leased? = placement, access.connection.isAutocommit {
                    try access.connection.execute("BEGIN DEFERRED")
                    ownsReadTransaction = true
                }
                let statement = try access.connection.prepare(sql)
                try statement.bind(arguments)
                return statement
            }
        } catch {
            if ownsReadTransaction, case .leased(_, let connection)? = placement {
                connection.lock.withLock { _ = try? connection.execute("ROLLBACK") }
            }
            if let placement { database.releaseCursorPlacement(placement) }
            placement = nil
            throw error
        }
    }

    /// Runs `body` with the cursor's connection in use.
    private func withAccess<T>(_ body: (Access) throws -> T) throws -> T {
        switch placement {
        case .writer?, nil:
            return try database.withAccess(.writerRead, body)
        case .borrowed(let access, let thread)?:
            guard ThreadState.current.identity == thread else {
                throw ActiveObjectError.misuse(
                    "this cursor reads the snapshot of the db.read { } block it was opened in: use it on that block's thread, inside the block")
            }
            return try use(access, body)
        case .leased(let access, _)?:
            return try use(access, body)
        }
    }

    private func use<T>(_ access: Access, _ body: (Access) throws -> T) throws -> T {
        let connection = access.connection
        connection.lock.lock()
        defer { connection.lock.unlock() }
        guard connection.sqliteConnection != nil, !database.isClosed else { throw ActiveObjectError.databaseClosed }
        return try body(access)
    }

    /// The next object, or nil when the rows are exhausted (the cursor then closes itself).
    /// - Throws: ``DatabaseError``, a `typeMismatch` for a row that does not fit (the cursor
    ///   is closed), or ``ActiveObjectError/databaseClosed``.
    public func next() throws -> Model? {
        if case .borrowed(_, let thread)? = placement, ThreadState.current.identity != thread {
            throw ActiveObjectError.misuse(
                "this cursor reads the snapshot of the db.read { } block it was opened in: use it on that block's thread, inside the block")
        }
        if nextPending < pending.count { return takePending() }
        guard let statement else {
            if database.isClosed { throw ActiveObjectError.databaseClosed }
            if outlivedItsScope {
                throw ActiveObjectError.misuse(
                    "this cursor read the snapshot of the db.read { } block it was opened in, which has ended: open it outside the block to keep it")
            }
            return nil
        }
        // The cursor closes once the connection's use is over (closing gives a leased reader
        // back, which must not happen while this thread still holds the reader's lock).
        var exhausted = false
        defer { if exhausted { close() } }
        do {
            return try withAccess { access -> Model? in
                guard let preload else {
                    guard try statement.step() else {
                        exhausted = true
                        return nil
                    }
                    return unsafeDowncast(try loader.load(from: statement), to: Model.self)
                }
                // With `including`, read a batch ahead so its relations load in one query,
                // from the cursor's snapshot.
                let batch = try loader.loadRows(from: statement, limit: batchSize)
                // The relations come from the cursor's snapshot (its read transaction, or its
                // statement's): preload before a short (last) batch closes the cursor.
                try preload(batch.unsafelyCast(to: Model.self), access)
                if batch.count < batchSize { exhausted = true }
                (pending, nextPending) = (batch, 0)
                return nextPending < pending.count ? takePending() : nil
            }
        } catch let error as DatabaseError where error.resultCode == .interrupt && database.isClosed {
            close()
            throw ActiveObjectError.databaseClosed
        } catch {
            close()
            throw error
        }
    }

    /// The next object read ahead (there is one), released from the buffer.
    private func takePending() -> Model {
        let object = pending[nextPending]
        nextPending += 1
        if nextPending == pending.count { (pending, nextPending) = ([], 0) }
        return unsafeDowncast(object, to: Model.self)
    }

    /// Ends the cursor early and releases its statement, its read transaction and its reader
    /// connection. Idempotent.
    public func close() {
        guard let statement else { return }
        self.statement = nil
        let connection = statement.connection
        connection.lock.withLock {
            statement.finalize()
            connection.options.traceHandler?(statement.sql, DispatchTime.now().uptimeNanoseconds &- start)
            if ownsReadTransaction && connection.sqliteConnection != nil && !connection.isAutocommit {
                if (try? connection.execute("COMMIT")) == nil { _ = try? connection.execute("ROLLBACK") }
            }
            ownsReadTransaction = false
        }
        if let placement { database.releaseCursorPlacement(placement) }
        placement = nil
    }

    /// The read block this cursor was opened in ended (see ``Database/placeCursor(_:)``).
    func scopeEnded() {
        if statement != nil { outlivedItsScope = true }
        close()
    }

    deinit { close() }
}
