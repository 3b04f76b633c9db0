import Foundation

/// Pulls the objects of a query one at a time, so that any number of rows can be walked in
/// constant memory.
///
/// ```swift
/// let cursor = try Person.where(\.$active == true).cursor()
/// while let person = try cursor.next() { print(person.name) }
/// ```
///
/// Between calls to ``next()`` other threads may use the database. An unfinished cursor
/// keeps a read transaction open (in WAL mode this holds back checkpoints): call ``close()``
/// or drop the cursor when you stop early. Closing the database finalizes open cursors;
/// their `next()` then throws ``ActiveObjectError/databaseClosed``.
public final class Cursor<Model: ActiveObject> {
    private let database: Database
    private var statement: Statement?
    private let loader: ObjectLoader
    /// Eager loading of the query's relations, for a batch of objects (nil without `including`).
    private let preload: (([Model]) throws -> Void)?
    private let batchSize: Int
    /// Objects read ahead and preloaded, not yet returned.
    private var pending: [Model] = []
    /// When the cursor started, for the trace hook (reported when it closes).
    private let start = DispatchTime.now().uptimeNanoseconds

    init(sql: String, arguments: [DatabaseValue], schema: ModelSchema, database: Database, context: ValueContext,
         preload: (([Model]) throws -> Void)? = nil, batchSize: Int = 1) throws {
        self.database = database
        self.preload = preload
        self.batchSize = Swift.max(1, batchSize)
        // A cursor owns its own statement (never a cached one): it stays open across calls.
        let statement = try database.withConnection { connection -> Statement in
            let statement = try connection.prepare(sql)
            try statement.bind(arguments)
            return statement
        }
        self.statement = statement
        loader = ObjectLoader(canonicalFor: schema, context: context)
    }

    /// The next object, or nil when the rows are exhausted (the cursor then closes itself).
    /// - Throws: ``DatabaseError``, a `typeMismatch` for a row that does not fit (the cursor
    ///   is closed), or ``ActiveObjectError/databaseClosed``.
    public func next() throws -> Model? {
        try database.withConnection { _ in
            if !pending.isEmpty { return pending.removeFirst() }
            guard let statement else { return nil }
            do {
                guard let preload else {
                    guard try statement.step() else {
                        close()
                        return nil
                    }
                    return unsafeDowncast(try loader.load(from: statement), to: Model.self)
                }
                // With `including`, read a batch ahead so its relations load in one query.
                var batch: [Model] = []
                while batch.count < batchSize, try statement.step() {
                    batch.append(unsafeDowncast(try loader.load(from: statement), to: Model.self))
                }
                if batch.count < batchSize { close() }
                try preload(batch)
                pending = batch
                return pending.isEmpty ? nil : pending.removeFirst()
            } catch {
                close()
                throw error
            }
        }
    }

    /// Ends the cursor early and releases its statement (and read transaction). Idempotent.
    public func close() {
        database.connection.lock.withLock {
            guard let statement else { return }
            statement.finalize()
            self.statement = nil
            database.connection.options.traceHandler?(statement.sql, DispatchTime.now().uptimeNanoseconds &- start)
        }
    }

    deinit { close() }
}
