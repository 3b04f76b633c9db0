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
    /// The reader this cursor reads on; nil when it reads on the writer.
    private var reader: Connection?
    /// Whether `reader` was leased for this cursor (given back when it closes), rather than
    /// borrowed from the enclosing ``Database/read(_:)`` block.
    private var leasedReader = false
    /// Set when the read block the cursor was opened in ended before the cursor did.
    private var outlivedItsScope = false
    /// For a cursor reading on a read block's connection: the thread of that block, the only
    /// one that may use it (the block holds the connection until it ends).
    private var ownerToken = 0
    private var statement: Statement?
    private let loader: ObjectLoader
    /// Eager loading of the query's relations, for a batch of objects (nil without `including`).
    private let preload: (([Model]) throws -> Void)?
    private let batchSize: Int
    /// Objects read ahead and preloaded; those from `nextPending` on are not returned yet.
    private var pending: [ActiveObject] = []
    private var nextPending = 0
    /// When the cursor started, for the trace hook (reported when it closes).
    private let start = DispatchTime.now().uptimeNanoseconds

    init(sql: String, arguments: [DatabaseValue], schema: ModelSchema, database: Database, context: ValueContext,
         preload: (([Model]) throws -> Void)? = nil, batchSize: Int = 1) throws {
        self.database = database
        self.preload = preload
        self.batchSize = Swift.max(1, batchSize)
        loader = ObjectLoader(canonicalFor: schema, context: context)
        if let (connection, leased) = try database.readerForCursor(self) {
            (reader, leasedReader) = (connection, leased)
        }
        // A cursor owns its own statement (never a cached one): it stays open across calls.
        do {
            statement = try withConnection { connection in
                let statement = try connection.prepare(sql)
                try statement.bind(arguments)
                return statement
            }
        } catch {
            if let reader, leasedReader { database.giveBackCursorReader(reader) }
            throw error
        }
        if reader != nil && !leasedReader { ownerToken = ThreadContext.current.token }
    }

    /// Runs `body` with the cursor's connection in use.
    private func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        guard let reader else {
            return try database.withWriterConnection(.current, body)
        }
        reader.lock.lock()
        defer { reader.lock.unlock() }
        _ = try reader.checkOpen()
        return try body(reader)
    }

    /// The next object, or nil when the rows are exhausted (the cursor then closes itself).
    /// - Throws: ``DatabaseError``, a `typeMismatch` for a row that does not fit (the cursor
    ///   is closed), or ``ActiveObjectError/databaseClosed``.
    public func next() throws -> Model? {
        if ownerToken != 0 && ThreadContext.current.token != ownerToken {
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
        do {
            return try withConnection { connection -> Model? in
                guard let preload else {
                    guard try statement.step() else {
                        close()
                        return nil
                    }
                    return unsafeDowncast(try loader.load(from: statement), to: Model.self)
                }
                // With `including`, read a batch ahead so its relations load in one query,
                // from the cursor's snapshot.
                let batch = try loader.loadRows(from: statement, limit: batchSize)
                // The relations come from the cursor's snapshot: preload before a short
                // (last) batch closes the cursor and gives its reader back.
                try database.scoped(connection) { try preload(batch.unsafelyCast(to: Model.self)) }
                if batch.count < batchSize { close() }
                (pending, nextPending) = (batch, 0)
                return nextPending < pending.count ? takePending() : nil
            }
        } catch let error as DatabaseError where error.resultCode == .interrupt && database.isShuttingDown {
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
        }
        if let reader, leasedReader { database.giveBackCursorReader(reader) }
    }

    /// The read block this cursor was opened in ended (see ``Database/readerForCursor(_:)``).
    func scopeEnded() {
        if statement != nil { outlivedItsScope = true }
        close()
    }

    deinit { close() }
}
