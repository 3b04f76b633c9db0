extension Database {
    /// Executes one SQL statement with `?` arguments bound in order, on the writer. A `nil`
    /// argument binds NULL.
    ///
    /// ```swift
    /// try db.execute("UPDATE person SET age = age + 1 WHERE id = ?", [42])
    /// try db.execute("UPDATE person SET rating = ? WHERE id = ?", [nil, 42])
    /// ```
    /// A raw `BEGIN` keeps the writer for this thread until the thread's `COMMIT` or
    /// `ROLLBACK` (other threads' writes wait); prefer ``transaction(_:)-8sgwh``. Afterwards
    /// ``changes`` and ``lastInsertedRowID`` tell what the statement did.
    ///
    /// - Throws: ``DatabaseError`` from SQLite; ``ActiveObjectError/invalidSQL(sql:reason:)``
    ///   when `sql` holds more than one statement (none of it runs);
    ///   ``ActiveObjectError/invalidArgument(_:)`` for an argument that cannot be stored;
    ///   ``ActiveObjectError/misuse(_:)`` for `BEGIN`/`COMMIT`/`ROLLBACK` inside
    ///   ``transaction(_:)-8sgwh`` or a write inside ``read(_:)-54zpm``.
    public func execute(_ sql: String, _ arguments: [(any ColumnValue)?] = []) throws {
        let values = try databaseValues(arguments)
        try withAccess(.write) { access in
            let connection = access.connection
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

    /// Runs a statement and returns all its rows.
    ///
    /// ```swift
    /// let rows = try db.rows("SELECT name, age FROM person WHERE age > ?", [30])
    /// let name: String = try rows[0]["name"]
    /// let made = try db.rows("INSERT INTO note(body) VALUES ('a') RETURNING id")   // on the writer
    /// ```
    /// It runs on a reader only when it is read-only and reads no connection state. A
    /// statement that writes (`INSERT`/`UPDATE`/`DELETE … RETURNING`), controls a transaction,
    /// sets or reads a `PRAGMA` value, or calls `last_insert_rowid()`, `changes()` or
    /// `total_changes()` runs on the writer, exactly as it would with one connection.
    /// - Throws: as ``execute(_:_:)-93qp6``.
    public func rows(_ sql: String, _ arguments: [(any ColumnValue)?] = []) throws -> [Row] {
        let values = try databaseValues(arguments)
        return try withRawStatement(sql) { access, statement in
            try access.connection.withStatement(statement, binding: { try $0.bind(values) }) { try access.connection.rows($0) }
        }
    }

    /// ``rows(_:_:)-8kx75`` with the arguments labelled.
    /// - Throws: as ``execute(_:_:)-93qp6``.
    public func rows(_ sql: String, arguments: [(any ColumnValue)?]) throws -> [Row] {
        try rows(sql, arguments)
    }

    /// The first column of the first row converted to `T`, or nil when there is no row or
    /// the value is NULL. Runs where ``rows(_:_:)-8kx75`` would.
    ///
    /// ```swift
    /// let n: Int? = try db.scalar("SELECT count(*) FROM person")
    /// let changed: Int? = try db.scalar("SELECT changes()")     // on the writer, not a reader (0)
    /// ```
    /// - Throws: ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)`` when
    ///   the value does not fit `T`; otherwise as ``execute(_:_:)-93qp6``.
    public func scalar<T: ColumnValue>(_ sql: String, _ arguments: [(any ColumnValue)?] = []) throws -> T? {
        let values = try databaseValues(arguments)
        let value = try withRawStatement(sql) { access, statement in
            try access.connection.withStatement(statement, binding: { try $0.bind(values) }) { statement in
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
}
