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

    init(sql: String, arguments: [DatabaseValue], schema: ModelSchema, database: Database, context: ValueContext) throws {
        self.database = database
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
            guard let statement else { return nil }
            do {
                guard try statement.step() else {
                    close()
                    return nil
                }
                return unsafeDowncast(try loader.load(from: statement), to: Model.self)
            } catch {
                close()
                throw error
            }
        }
    }

    /// Ends the cursor early and releases its statement (and read transaction). Idempotent.
    public func close() {
        database.connection.lock.withLock {
            statement?.finalize()
            statement = nil
        }
    }

    deinit { close() }
}
