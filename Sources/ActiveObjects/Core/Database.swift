import Foundation

/// A connection to one SQLite database: raw SQL, transactions, and the home of your models.
///
/// ```swift
/// let db = try Database(path: "people.sqlite")     // created if missing
/// try db.execute("CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
/// try db.execute("INSERT INTO note(text) VALUES (?)", ["hello"])
/// let count: Int? = try db.scalar("SELECT count(*) FROM note")
/// ActiveObject.defaultDatabase = db
/// ```
///
/// `Database` is `Sendable`: use one instance from many threads and tasks. Calls are
/// serialized; a ``transaction(_:)`` holds the database for its whole body, so other threads
/// wait for it to finish, while the thread running the transaction may call back in freely.
public final class Database: @unchecked Sendable {
    // Safety of @unchecked Sendable: the only mutable state is `connection`'s, and every
    // access to it happens while `connection.lock` is held (see `withConnection`).
    let connection: Connection

    /// The path the database was opened with (`":memory:"` for in-memory databases).
    public let path: String
    /// The options the database was opened with.
    public let options: Options

    /// Opens (creating if missing) the database file at `path`. `":memory:"` opens a private
    /// in-memory database.
    ///
    /// - Throws: ``DatabaseError`` — `cannotOpen` for a missing folder or a directory,
    ///   `notADatabase` for a file that is not SQLite (the file is left untouched).
    public init(path: String, options: Options = Options()) throws {
        self.path = path
        self.options = options
        self.connection = try Connection(path: path, options: options)
    }

    /// Opens a new, private in-memory database.
    public static func inMemory(options: Options = Options()) throws -> Database {
        try Database(path: ":memory:", options: options)
    }

    deinit { connection.lock.withLock { connection.closeNow() } }

    /// Closes the database. Idempotent. Afterwards every call throws
    /// ``ActiveObjectError/databaseClosed``; open cursors are finalized and throw the same.
    public func close() throws {
        connection.lock.withLock { connection.closeNow() }
    }

    /// True once ``close()`` was called.
    public var isClosed: Bool { connection.lock.withLock { connection.sqliteConnection == nil } }

    /// Runs `body` with exclusive use of the connection (re-entrant on the same thread).
    func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        connection.lock.lock()
        defer { connection.lock.unlock() }
        _ = try connection.checkOpen()
        return try body(connection)
    }

    /// The value context (date strategy) of this database.
    var valueContext: ValueContext { connection.valueContext }

    func databaseValues(_ arguments: [any ColumnValue]) throws -> [DatabaseValue] {
        try arguments.enumerated().map { index, value in
            do { return try value.databaseValue(in: connection.valueContext) } catch {
                throw ActiveObjectError.invalidArgument("argument \(index + 1): \(error)")
            }
        }
    }

    // MARK: Raw SQL

    /// Executes one SQL statement with `?` arguments bound in order.
    ///
    /// ```swift
    /// try db.execute("UPDATE person SET age = age + 1 WHERE id = ?", [42])
    /// ```
    /// - Throws: ``DatabaseError`` from SQLite; ``ActiveObjectError/invalidSQL(sql:reason:)``
    ///   when `sql` holds more than one statement (none of it runs).
    public func execute(_ sql: String, _ arguments: [any ColumnValue] = []) throws {
        let values = try databaseValues(arguments)
        try withConnection { try $0.execute(sql, values) }
    }

    /// Runs a query and returns all its rows.
    ///
    /// ```swift
    /// let rows = try db.rows("SELECT name, age FROM person WHERE age > ?", [30])
    /// let name: String = try rows[0]["name"]
    /// ```
    public func rows(_ sql: String, _ arguments: [any ColumnValue] = []) throws -> [Row] {
        let values = try databaseValues(arguments)
        return try withConnection { try $0.rows(sql, values) }
    }

    /// The first column of the first row converted to `T`, or nil when there is no row or
    /// the value is NULL.
    ///
    /// ```swift
    /// let n: Int? = try db.scalar("SELECT count(*) FROM person")
    /// ```
    /// - Throws: ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)`` when
    ///   the value does not fit `T`.
    public func scalar<T: ColumnValue>(_ sql: String, _ arguments: [any ColumnValue] = []) throws -> T? {
        let values = try databaseValues(arguments)
        return try withConnection { connection in
            guard let value = try connection.scalarValue(sql, values), !value.isNull else { return nil }
            guard let converted = T.fromDatabaseValue(value, in: connection.valueContext) else {
                throw ActiveObjectError.typeMismatch(
                    table: "(query result)", column: "1", rowID: nil,
                    expected: String(describing: T.self), found: value.description)
            }
            return converted
        }
    }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE on this database.
    public var changes: Int { connection.lock.withLock { connection.changes } }

    /// True while a ``transaction(_:)`` (or a transaction begun with raw SQL) is open.
    public var isInTransaction: Bool { connection.lock.withLock { !connection.isAutocommit } }

    // MARK: Transactions

    /// Runs `body` in a transaction: `BEGIN IMMEDIATE` … `COMMIT`, or `ROLLBACK` when `body`
    /// throws (the error is rethrown). Nested calls become savepoints, so an inner failure
    /// undoes only the inner work.
    ///
    /// ```swift
    /// try db.transaction {
    ///     try alice.save()
    ///     try bob.save()
    /// }
    /// ```
    ///
    /// Other threads wait until the transaction ends; the thread running it can use the
    /// database (and models) inside `body`. `BEGIN IMMEDIATE` takes the write lock up front,
    /// which avoids the deadlock-avoidance `busy` errors of deferred transactions.
    /// If SQLite already rolled the transaction back (after `full`, `ioError`, some `busy`
    /// errors), no second ROLLBACK is attempted and the original error is thrown.
    ///
    /// When the transaction (or a nested savepoint) rolls back, the model objects saved or
    /// deleted inside it get back the `id` and change tracking they had before: an object
    /// whose INSERT was rolled back has `id == nil` again and its changes pending, so saving
    /// it again after the failure writes it (hooks such as `didSave()` are not undone).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try withConnection { connection in
            let depth = connection.transactionDepth
            let savepoint = "activeobjects_\(depth)"
            if depth == 0 { connection.clearUndoLog() }
            let mark = connection.rollbackActions.count
            if depth == 0 {
                try connection.execute("BEGIN IMMEDIATE")
            } else {
                try connection.execute("SAVEPOINT \(savepoint)")
            }
            connection.transactionDepth += 1
            let result: T
            do {
                result = try body()
            } catch {
                connection.transactionDepth -= 1
                rollBack(connection, depth: depth, savepoint: savepoint, mark: mark)
                throw error
            }
            connection.transactionDepth -= 1
            do {
                // `body` closed the database: SQLite rolled back while closing.
                _ = try connection.checkOpen()
                if connection.isAutocommit {
                    // SQLite already rolled back (e.g. after a failure that `body` caught).
                    throw DatabaseError(extendedResultCode: .abort,
                                        message: "the transaction was rolled back by SQLite after an earlier error")
                }
                try connection.execute(depth == 0 ? "COMMIT" : "RELEASE \(savepoint)")
            } catch {
                rollBack(connection, depth: depth, savepoint: savepoint, mark: mark)
                throw error
            }
            // Committed for good: nothing to undo. (A released savepoint's objects stay
            // recorded: the enclosing transaction may still roll back.)
            if depth == 0 { connection.clearUndoLog() }
            return result
        }
    }

    private func rollBack(_ connection: Connection, depth: Int, savepoint: String, mark: Int) {
        // The objects saved or deleted since `mark` get back their id and snapshot: a
        // rolled-back insert leaves `id == nil` and the changes pending, so a retry saves them.
        connection.undoObjectWrites(from: mark)
        // After SQLITE_FULL, IOERR, BUSY or NOMEM the transaction may already be gone:
        // check before issuing ROLLBACK (https://www.sqlite.org/lang_transaction.html).
        guard !connection.isAutocommit else { return }
        if depth == 0 {
            try? connection.execute("ROLLBACK")
        } else {
            try? connection.execute("ROLLBACK TO \(savepoint)")
            try? connection.execute("RELEASE \(savepoint)")
        }
    }
}
