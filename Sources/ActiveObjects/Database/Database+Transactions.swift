extension Database {
    /// Runs `body` in a transaction on the writer: `BEGIN IMMEDIATE` … `COMMIT`, or
    /// `ROLLBACK` when `body` throws (the error is rethrown). Nested calls become savepoints,
    /// so an inner failure undoes only the inner work.
    ///
    /// ```swift
    /// try db.transaction {
    ///     try alice.save()
    ///     try bob.save()
    /// }
    /// ```
    ///
    /// Everything `body` does on this database runs on the writer, so its reads see its own
    /// writes. Other threads' writes wait until the transaction ends (at most the busy
    /// timeout); their reads do not wait: they see the database as it was before it began.
    /// `BEGIN IMMEDIATE` takes the write lock up front, which avoids the deadlock-avoidance
    /// `busy` errors of deferred transactions. If SQLite already rolled the transaction back
    /// (after `full`, `ioError`, some `busy` errors), no second ROLLBACK is attempted and the
    /// original error is thrown. Raw `BEGIN`, `COMMIT` and `ROLLBACK` statements inside
    /// `body` are refused, and so is a raw `RELEASE` or `ROLLBACK TO` of a savepoint that
    /// `body` did not open (releasing an enclosing savepoint would commit behind its back).
    ///
    /// When the transaction (or a nested savepoint) rolls back, the model objects saved or
    /// deleted inside it get back the `id` and change tracking they had before: an object
    /// whose INSERT was rolled back has `id == nil` again and its changes pending, so saving
    /// it again after the failure writes it (hooks such as `didSave()` are not undone).
    ///
    /// - Throws: what `body` throws; ``DatabaseError`` when BEGIN or COMMIT fails (busy, a
    ///   deferred constraint…); ``ActiveObjectError/misuse(_:)`` inside ``read(_:)-54zpm``
    ///   (and, from the statement, for the raw transaction statements above).
    @discardableResult
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try withAccess(.write) { access in
            let connection = access.connection
            // A raw BEGIN of this thread may already be open: nest inside it.
            let nested = connection.transactionDepth > 0 || !connection.isAutocommit
            let savepoint = SQLIdentifier.quote("\(Self.savepointPrefix)\(connection.transactionDepth)")
            try connection.execute(nested ? "SAVEPOINT \(savepoint)" : "BEGIN IMMEDIATE")
            connection.beginLevel()
            let result: T
            do {
                result = try body()
            } catch {
                rollBack(connection, nested: nested, savepoint: savepoint)
                throw error
            }
            do {
                // `body` closed the database: SQLite rolled back while closing.
                _ = try connection.checkOpen()
                if connection.isAutocommit {
                    // SQLite already rolled back (e.g. after a failure that `body` caught).
                    throw DatabaseError(extendedResultCode: .abort,
                                        message: "the transaction was rolled back by SQLite after an earlier error")
                }
                try connection.execute(nested ? "RELEASE \(savepoint)" : "COMMIT")
            } catch {
                rollBack(connection, nested: nested, savepoint: savepoint)
                throw error
            }
            connection.commitLevel()
            return result
        }
    }

    private func rollBack(_ connection: Connection, nested: Bool, savepoint: String) {
        // After SQLITE_FULL, IOERR, BUSY or NOMEM the transaction may already be gone:
        // check before issuing ROLLBACK (https://www.sqlite.org/lang_transaction.html).
        if connection.sqliteConnection != nil && !connection.isAutocommit {
            if nested {
                try? connection.execute("ROLLBACK TO \(savepoint)")
                try? connection.execute("RELEASE \(savepoint)")
            } else {
                try? connection.execute("ROLLBACK")
            }
        }
        // The objects saved or deleted at this level get back their id and snapshot.
        connection.rollBackLevel()
    }

    /// Runs several reads in one snapshot: they all see the database as it was when the first
    /// of them ran, whatever other threads commit meanwhile.
    ///
    /// ```swift
    /// let (count, people) = try db.read { (try Person.countAll(), try Person.findAll()) }  // always agree
    /// ```
    ///
    /// With reader connections, `body` runs on one reader inside a deferred transaction (a read
    /// transaction), beside the writer. Writes inside `body` are refused. Inside a
    /// ``transaction(_:)-8sgwh`` of this thread, `body` reads on the writer and sees the
    /// transaction's own writes.
    ///
    /// - Throws: what `body` throws; ``ActiveObjectError/misuse(_:)`` for a write inside;
    ///   ``DatabaseError`` `busy` when no reader became free within the busy timeout.
    @discardableResult
    public func read<T>(_ body: () throws -> T) throws -> T {
        try withAccess(.readBlock) { _ in try body() }
    }
}
