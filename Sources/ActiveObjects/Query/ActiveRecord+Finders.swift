extension ActiveRecord where Self: ActiveObject {
    // MARK: Queries

    /// A query for all rows of this model, to refine and run: `Person.all.order(by: \.$name)`.
    public static var all: Query<Self> { Query() }

    /// A query filtered by a criteria dictionary (AND of equalities; array → `IN`, nil → `IS NULL`).
    public static func `where`(_ criteria: [String: Any?]) -> Query<Self> { Query<Self>().where(criteria) }

    /// A query filtered by an SQL fragment with `?` arguments.
    public static func `where`(_ sql: String, _ arguments: (any ColumnValue)?...) -> Query<Self> {
        Query<Self>().where(sql, arguments: arguments)
    }

    /// A query filtered by an SQL fragment with an array of `?` arguments:
    /// `Person.where("age >= ?", arguments: [18])`.
    public static func `where`(_ sql: String, arguments: [(any ColumnValue)?]) -> Query<Self> {
        Query<Self>().where(sql, arguments: arguments)
    }

    /// A query filtered by a typed comparison: `Person.where(\.$name, .like("J%"))`.
    public static func `where`<V>(_ column: KeyPath<Self, ColumnReference<V>>, _ comparison: ColumnOperator<V>) -> Query<Self> {
        Query<Self>().where(column, comparison)
    }

    /// A query filtered by a predicate: `Person.where(\.$age > 30 && \.$name == "Joe")`.
    public static func `where`(_ predicate: QueryPredicate<Self>) -> Query<Self> { Query<Self>().where(predicate) }

    /// A query ordered by a column.
    public static func order<V>(by column: KeyPath<Self, ColumnReference<V>>, _ direction: SortDirection = .ascending) -> Query<Self> {
        Query<Self>().order(by: column, direction)
    }

    /// A query ordered by a property or column name.
    public static func order(by column: String, _ direction: SortDirection = .ascending) -> Query<Self> {
        Query<Self>().order(by: column, direction)
    }

    /// A query for every row of this model, soft-deleted ones included:
    /// `Post.withDeleted().all()` is `Post.all.withDeleted().all()`. See ``Query/withDeleted()``.
    public static func withDeleted() -> Query<Self> { Query<Self>().withDeleted() }

    /// A query for the soft-deleted rows of this model (the bin): `Post.onlyDeleted().all()`.
    /// See ``Query/onlyDeleted()`` (the query throws
    /// ``ActiveObjectError/invalidArgument(_:)`` when it runs for a model without a
    /// `@Column(role: .deletedAt)`).
    public static func onlyDeleted() -> Query<Self> { Query<Self>().onlyDeleted() }

    // MARK: Finders

    /// The object with this `id` (rowid), or nil — also nil when the row is soft-deleted (a
    /// model with a `@Column(role: .deletedAt)`: look it up with
    /// `Post.all.withDeleted().where(\.$id == id).first()`).
    /// (Natural keys: ``ActiveRecord/find(key:)-6fbba``.)
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` for a `WITHOUT ROWID` table,
    ///   ``ActiveObjectError/noDatabase(model:)``, ``ActiveObjectError/invalidModel(model:reason:)``,
    ///   ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)``, ``DatabaseError``.
    public static func find(id: Int64) throws -> Self? {
        let schema = try ModelSchema.of(self)
        // A soft-deleting model adds its condition; every other model runs the cached lookup
        // here, in the public function (a call into the internal helper below was not
        // specialized for the caller's model: ~380 instructions more per lookup, callgrind).
        if schema.roles.deletedAt != nil { return try find(id: id, scope: .visible) }
        guard let database = self.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        let context = schema.context(in: database)
        guard let findByRowID = schema.sql(in: database).findByRowIDSQL else { throw noRowIDs(schema) }
        return try database.withAccess(.read) { access in
            try access.connection.withStatement(findByRowID, [.integer(id)]) { statement in
                guard try statement.step() else { return nil }
                let loader = ObjectLoader(canonicalFor: schema, context: context)
                return unsafeDowncast(try loader.load(from: statement), to: Self.self)
            }
        }
    }

    /// ``find(id:)`` reading the rows of `scope` (relations `withDeleted()`).
    static func find(id: Int64, scope: SoftDeleteScope) throws -> Self? {
        let schema = try ModelSchema.of(self)
        guard let database = self.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        let context = schema.context(in: database)
        guard let findByRowID = schema.sql(in: database).findByRowIDSQL else { throw noRowIDs(schema) }
        // Soft delete: the cached statement, plus its condition (one branch for other models).
        // Each branch passes its own closure literal: a closure stored in a variable and shared
        // was a heap-allocated context per call (about 900 instructions per lookup, callgrind).
        guard let softDelete = try schema.softDeleteCondition(scope) else {
            return try database.withAccess(.read) { access in
                try access.connection.withStatement(findByRowID, [.integer(id)]) { statement in
                    guard try statement.step() else { return nil }
                    let loader = ObjectLoader(canonicalFor: schema, context: context)
                    return unsafeDowncast(try loader.load(from: statement), to: Self.self)
                }
            }
        }
        let sql = findByRowID.sql + " AND " + softDelete
        return try database.withAccess(.read) { access in
            try access.connection.withStatement(sql, [.integer(id)]) { statement in
                guard try statement.step() else { return nil }
                let loader = ObjectLoader(canonicalFor: schema, context: context)
                return unsafeDowncast(try loader.load(from: statement), to: Self.self)
            }
        }
    }

    /// The objects with these ids (rowids, as ``ActiveRecord/find(id:)-6olih`` takes), in one
    /// query, in the order of `ids` (ids without a row are skipped; a repeated id gives the
    /// object once). For a natural or composite key, look rows up by their key with
    /// ``ActiveRecord/find(key:)-6fbba``.
    ///
    /// ```swift
    /// let some: [Person] = try Person.find(ids: [3, 1, 2])
    /// ```
    /// - Throws: as ``ActiveRecord/find(id:)-6olih`` (``ActiveObjectError/invalidArgument(_:)``
    ///   for a `WITHOUT ROWID` table).
    public static func find(ids: [Int64]) throws -> [Self] {
        let schema = try ModelSchema.of(self)
        guard let database = self.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        // Declared so, or found so in the file (another tool made the table).
        if schema.sql(in: database).findByRowIDSQL == nil { throw noRowIDs(schema) }
        guard !ids.isEmpty else { return [] }
        let found = try Query<Self>().where(\Self.$id, .in(ids)).all()
        return orderedByIDs(found, ids)
    }

    /// The error of an id lookup in a `WITHOUT ROWID` table.
    private static func noRowIDs(_ schema: ModelSchema) -> ActiveObjectError {
        .invalidArgument("\(schema.modelName)'s table is WITHOUT ROWID: its rows have no id; use find(key:)")
    }

    /// `objects` in the order of `ids`, each once.
    static func orderedByIDs(_ objects: [Self], _ ids: [Int64]) -> [Self] {
        var byID: [Int64: Self] = [:]
        for object in objects { if let id = object.id { byID[id] = object } }
        var seen = Set<Int64>()
        return ids.compactMap { id in seen.insert(id).inserted ? byID[id] : nil }
    }

    /// Every object of the table, in primary-key order. For large tables prefer
    /// `Person.all.each { … }` or a cursor, which keep one row in memory at a time.
    /// - Throws: as ``ActiveRecord/find(id:)-6olih``.
    public static func findAll() throws -> [Self] { try Query<Self>().orderedByKeyIfUnordered.all() }

    /// The objects matching a criteria dictionary: `Person.find(where: ["age": 30])`.
    /// - Throws: ``ActiveObjectError/unknownColumn(table:column:)`` for a key the model does
    ///   not declare (no SQL runs); otherwise as ``ActiveRecord/find(id:)-6olih``.
    public static func find(where criteria: [String: Any?]) throws -> [Self] { try Query<Self>().where(criteria).all() }

    /// The first object (lowest primary key) matching a criteria dictionary, or nil.
    /// - Throws: as ``ActiveRecord/find(where:)-8xnob``.
    public static func findFirst(where criteria: [String: Any?]) throws -> Self? {
        try Query<Self>().where(criteria).first()
    }

    /// The number of rows.
    /// - Throws: ``ActiveObjectError/noDatabase(model:)``, ``DatabaseError``.
    public static func countAll() throws -> Int { try Query<Self>().count() }

    /// The number of rows matching a criteria dictionary.
    /// - Throws: as ``ActiveRecord/find(where:)-8xnob``.
    public static func count(where criteria: [String: Any?]) throws -> Int { try Query<Self>().where(criteria).count() }

    /// Deletes the rows matching a criteria dictionary (hooks are not run) and returns how many.
    /// For a model with a `@Column(role: .deletedAt)` this is a soft delete (see
    /// ``Query/delete()-70fu1``): it marks the matching rows not deleted yet, and returns how many.
    /// - Throws: as ``ActiveRecord/find(where:)-8xnob``; ``ActiveObjectError/misuse(_:)``
    ///   inside `db.read`.
    @discardableResult
    public static func delete(where criteria: [String: Any?]) throws -> Int {
        try Query<Self>().where(criteria).delete(permanently: false)
    }

    /// Deletes the rows matching a criteria dictionary — for real when `permanently` is true,
    /// even for a model with a `@Column(role: .deletedAt)`, soft-deleted rows included — and
    /// returns how many (hooks are not run). `delete(where:permanently: false)` is
    /// ``ActiveRecord/delete(where:)-6fi2k``. (A query keeps its own scope:
    /// `Post.where(criteria).delete(permanently: true)` deletes the visible rows only.)
    /// - Throws: as ``ActiveRecord/delete(where:)-6fi2k``.
    @discardableResult
    public static func delete(where criteria: [String: Any?], permanently: Bool) throws -> Int {
        let query = Query<Self>().where(criteria)
        return try (permanently ? query.withDeleted() : query).delete(permanently: permanently)
    }

    /// Deletes every row (hooks are not run) and returns how many. For a model with a
    /// `@Column(role: .deletedAt)` this is a soft delete of every row not deleted yet.
    /// - Throws: ``ActiveObjectError/noDatabase(model:)``, ``DatabaseError``,
    ///   ``ActiveObjectError/misuse(_:)`` inside `db.read`.
    @discardableResult
    public static func deleteAll() throws -> Int { try Query<Self>().delete(permanently: false) }

    /// Deletes every row — for real when `permanently` is true, soft-deleted rows included:
    /// the table is empty afterwards — and returns how many (hooks are not run).
    /// `deleteAll(permanently: false)` is ``ActiveRecord/deleteAll()-5nael``. (To empty only
    /// the bin: `Post.all.onlyDeleted().delete(permanently: true)`.)
    /// - Throws: as ``ActiveRecord/deleteAll()-5nael``.
    @discardableResult
    public static func deleteAll(permanently: Bool) throws -> Int {
        try (permanently ? Query<Self>().withDeleted() : Query<Self>()).delete(permanently: permanently)
    }

    /// Objects from your own SQL. Result columns are matched to properties by column name;
    /// the SQL is run as written: soft-deleted rows are not left out (add
    /// `WHERE "deletedAt" IS NULL` yourself).
    /// extra columns are ignored; a property without a column keeps its default (and is not
    /// written back by `save()` unless you change it). Objects loaded without the primary key
    /// column name no row: `save()`, `update()`, `upsert()`, `delete()` and `reload()` refuse
    /// them with ``ActiveObjectError/misuse(_:)`` (`insert()` still adds them as new rows
    /// when every model column was selected).
    /// Objects loaded without some model columns cannot write a whole row (`insert()`,
    /// `upsert()`, `save()` after a changed `id` or a `delete()`): also `misuse`.
    ///
    /// ```swift
    /// let older = try Person.fetch(sql: "SELECT * FROM person WHERE age > ?", [40])
    /// ```
    /// - Throws: ``ActiveObjectError/invalidSQL(sql:reason:)``, ``ActiveObjectError/invalidArgument(_:)``,
    ///   ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)``, ``DatabaseError``.
    public static func fetch(sql: String, _ arguments: [(any ColumnValue)?] = []) throws -> [Self] {
        let schema = try ModelSchema.of(self)
        guard let database = self.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        let context = schema.context(in: database)
        let values = try database.databaseValues(arguments, in: context)
        return try database.withRawStatement(sql) { access, statement in
            try access.connection.withStatement(statement, binding: { try $0.bind(values) }) { statement in
                // Map the columns after the first step: a cached `SELECT *` is re-prepared by
                // `sqlite3_step` when another connection changed the schema, and only then
                // shows the new column layout (a dropped or reordered column shifts them).
                guard try statement.step() else { return [] }
                let loader = ObjectLoader(schema: schema, statement: statement, context: context)
                var objects = [try loader.load(from: statement)]
                objects += try loader.loadRows(from: statement)
                return objects.unsafelyCast(to: Self.self)
            }
        }
    }

    /// ``ActiveRecord/fetch(sql:_:)-5rjk0`` with the arguments labelled:
    /// `Person.fetch(sql: "SELECT * FROM person WHERE age > ?", arguments: [40])`.
    /// - Throws: as ``ActiveRecord/fetch(sql:_:)-5rjk0``.
    public static func fetch(sql: String, arguments: [(any ColumnValue)?]) throws -> [Self] {
        try fetch(sql: sql, arguments)
    }
}
