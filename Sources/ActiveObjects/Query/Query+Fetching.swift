extension Query {
    /// Every matching object, in order. The fetch and the relations it eager-loads
    /// (`including`) read one snapshot.
    /// - Throws: ``ActiveObjectError/unknownColumn(table:column:)`` and the other errors of
    ///   building the query (before any SQL runs); ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)``
    ///   for a row that does not fit the model; ``DatabaseError`` from SQLite.
    public func all() throws -> [Model] {
        let compiled = try compile()
        // With relations to load, one read transaction spans the rows and their relations.
        return try compiled.database.withAccess(preloaders.isEmpty ? .read : .snapshot) { access in
            try all(compiled, in: access)
        }
    }

    /// Every matching object, read with `access`, and the relations of `including` too.
    func all(_ compiled: Compiled, in access: Access) throws -> [Model] {
        let objects = try fetch(compiled, on: access.connection)
        try preload(objects, in: access)
        return objects
    }

    /// Every matching object, read with `access` when it belongs to this query's database (eager
    /// loading: the relations come from the snapshot their owners came from), else with an
    /// access of its own.
    func all(reusing access: Access) throws -> [Model] {
        let compiled = try compile()
        guard access.belongs(to: compiled.database) else { return try all() }
        return try all(compiled, in: access)
    }

    /// Runs the compiled SELECT on `connection` and loads every row.
    func fetch(_ compiled: Compiled, on connection: Connection) throws -> [Model] {
        try connection.withStatement(compiled.selectSQL, compiled.tailArguments) { statement in
            let loader = ObjectLoader(canonicalFor: compiled.schema, context: compiled.context)
            return try loader.loadRows(from: statement).unsafelyCast(to: Model.self)
        }
    }

    /// The first matching object, or nil. Without an `order(by:)`, the one with the smallest
    /// primary key (like `findFirst(where:)`).
    /// - Throws: as ``all()-2jzog``.
    public func first() throws -> Model? {
        try orderedByKeyIfUnordered.limit(1).all().first
    }

    /// The number of matching rows (respecting `limit` and `offset`).
    /// - Throws: as ``all()-2jzog``.
    public func count() throws -> Int {
        let compiled = try compile()
        let table = compiled.source
        let sql = compiled.isDistinct
            ? "SELECT count(*) FROM (\(compiled.selectSQL))"
            : compiled.limitClause.isEmpty
                ? "SELECT count(*) FROM \(table)\(compiled.whereClause)"
                : "SELECT count(*) FROM (SELECT 1 FROM \(table)\(compiled.tail))"
        return try compiled.database.withAccess(.read) { access in
            guard case .integer(let count)? = try access.connection.scalarValue(sql, compiled.tailArguments) else { return 0 }
            return Int(count)
        }
    }

    /// The number of non-NULL values of a column among the matching rows — of distinct values
    /// after ``distinct()``: `Order.all.distinct().count(\.$shipCity)`.
    /// - Throws: as ``all()-2jzog``.
    public func count<V>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> Int {
        let compiled = try compile()
        let schema = compiled.schema
        let quoted = compiled.quotedColumn(slot: try schema.slot(for: column))
        let counted = compiled.isDistinct ? "DISTINCT \(quoted)" : quoted
        // With a limit, the limit applies to what pluck would return: distinct values, if distinct.
        let sql = compiled.limitClause.isEmpty
            ? "SELECT count(\(counted)) FROM \(compiled.source)\(compiled.whereClause)"
            : "SELECT count(\"_v\") FROM (\(compiled.selectKeyword) \(quoted) AS \"_v\" FROM \(compiled.source)\(compiled.tail))"
        return try compiled.database.withAccess(.read) { access in
            guard case .integer(let count)? = try access.connection.scalarValue(sql, compiled.tailArguments) else { return 0 }
            return Int(count)
        }
    }

    /// Async form of ``count(_:)``: runs on a reader thread.
    /// - Throws: as ``all()-2jzog``.
    public func count<V>(_ column: KeyPath<Model, ColumnReference<V>>) async throws -> Int {
        guard let database = Model.resolvedDatabase else {
            throw ActiveObjectError.noDatabase(model: String(describing: Model.self))
        }
        let path = SendableKeyPath(keyPath: column)
        return try await database.perform(.reading) {
            try self.count(path.keyPath as! KeyPath<Model, ColumnReference<V>>)
        }
    }

    /// Whether any row matches.
    /// - Throws: as ``all()-2jzog``.
    public func exists() throws -> Bool {
        let compiled = try compile()
        let sql = "SELECT EXISTS (SELECT 1 FROM \(compiled.source)\(compiled.tail))"
        return try compiled.database.withAccess(.read) { access in
            try access.connection.scalarValue(sql, compiled.tailArguments) == .integer(1)
        }
    }

    /// One page of results, 1-based: `page(3, size: 20)` is rows 41…60 of the query's filters
    /// and ordering (primary-key order when it has none); it replaces any `limit` and `offset`.
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` for a page below 1, a size below 1,
    ///   or a page beyond `Int`'s range; otherwise as ``all()-2jzog``.
    public func page(_ number: Int, size: Int) throws -> [Model] {
        try pageQuery(number, size: size).all()
    }

    /// The query of one page (see ``page(_:size:)``).
    func pageQuery(_ number: Int, size: Int) throws -> Query {
        guard number >= 1 else { throw ActiveObjectError.invalidArgument("page numbers start at 1, got \(number)") }
        guard size >= 1 else { throw ActiveObjectError.invalidArgument("page size must be at least 1, got \(size)") }
        let (skip, overflow) = (number - 1).multipliedReportingOverflow(by: size)
        guard !overflow else { throw ActiveObjectError.invalidArgument("page \(number) of size \(size) is out of range") }
        return orderedByKeyIfUnordered.limit(size).offset(skip)
    }

    /// The values of one column for the matching rows, typed: `try q.pluck(\.$name)` is
    /// `[String]`; `q.pluck(\.$id)` gives the keys.
    /// - Throws: as ``all()-2jzog``.
    public func pluck<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> [V] {
        let compiled = try compile()
        let schema = compiled.schema
        let slot = try schema.slot(for: column)
        let name = schema.columnName(slot: slot)
        // The rowid comes along for error messages, except where it would defeat DISTINCT.
        let idColumn = compiled.isDistinct ? "" : ", \(compiled.sql.idExpression)"
        let sql = "\(compiled.selectKeyword) \(compiled.quotedColumn(slot: slot))\(idColumn) FROM \(compiled.source)\(compiled.tail)"
        return try compiled.database.withAccess(.read) { access in
            try access.connection.withStatement(sql, compiled.tailArguments) { statement in
                var values: [V] = []
                while try statement.step() {
                    let value = statement.value(at: 0)
                    guard let typed = V.fromDatabaseValue(value, in: compiled.context) else {
                        throw ActiveObjectError.typeMismatch(
                            table: schema.tableName, column: name,
                            rowID: compiled.isDistinct ? nil : statement.int64IfInteger(at: 1),
                            expected: String(describing: V.self), found: value.description)
                    }
                    values.append(typed)
                }
                return values
            }
        }
    }

    /// How many objects `each` and cursors gather before eager-loading their relations
    /// (only when the query has `including(_:)`): one extra query per relation per batch.
    static var preloadBatchSize: Int { 256 }

    /// Calls `body` with each matching object, one row in memory at a time (with
    /// `including(_:)`, a batch of 256 rows, so that relations still load in
    /// one query per batch).
    ///
    /// The rows — and with `including`, their relations — come from one read snapshot (a reader
    /// connection held for the walk); `body` may use the database freely: its writes go to the
    /// writer, its reads start fresh snapshots that see those writes. (Inside a transaction, or
    /// with one connection for everything, the walk reads on the writer, in the transaction's
    /// snapshot or the statement's.) If `body` throws, the iteration stops, the statement is
    /// reset, and the error is rethrown.
    /// - Throws: what `body` throws; otherwise as ``all()-2jzog``.
    public func each(_ body: (Model) throws -> Void) throws {
        let compiled = try compile()
        try compiled.database.withAccess(.read) { access in
            // With `including`, one read transaction for the walk on its reader: the relations
            // of the last batch, loaded after the statement's last step, come from the rows'
            // snapshot. (Not a scope: the body's own reads still see its writes. Not on the
            // writer, where the body's writes would join it.)
            let opens = !preloaders.isEmpty && access.role == .reader && access.connection.isAutocommit
            if opens { try access.connection.execute("BEGIN DEFERRED") }
            defer {
                if opens && access.connection.sqliteConnection != nil && !access.connection.isAutocommit,
                   (try? access.connection.execute("COMMIT")) == nil {
                    _ = try? access.connection.execute("ROLLBACK")
                }
            }
            try access.connection.withStatement(compiled.selectSQL, compiled.tailArguments) { statement in
                let loader = ObjectLoader(canonicalFor: compiled.schema, context: compiled.context)
                guard !preloaders.isEmpty else {
                    while try statement.step() {
                        try body(unsafeDowncast(try loader.load(from: statement), to: Model.self))
                    }
                    return
                }
                var more = true
                while more {
                    let batch = try loader.loadRows(from: statement, limit: Self.preloadBatchSize)
                        .unsafelyCast(to: Model.self)
                    more = batch.count == Self.preloadBatchSize
                    // The relations come from the same snapshot as the rows: the same connection,
                    // in the walk's read transaction.
                    try preload(batch, in: access)
                    for object in batch { try body(object) }
                }
            }
        }
    }

    /// A cursor that pulls matching objects one at a time:
    /// `while let person = try cursor.next() { … }`. See ``Cursor``.
    /// - Throws: as ``all()-2jzog``; ``DatabaseError`` `busy` when no reader became free in time.
    public func cursor() throws -> Cursor<Model> {
        let compiled = try compile()
        let preload: (([Model], Access) throws -> Void)? = preloaders.isEmpty ? nil : { try self.preload($0, in: $1) }
        return try Cursor(sql: compiled.selectSQL, arguments: compiled.tailArguments,
                          schema: compiled.schema, database: compiled.database, context: compiled.context,
                          preload: preload, batchSize: Self.preloadBatchSize)
    }
}
