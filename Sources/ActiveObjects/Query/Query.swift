/// Sort order for ``Query/order(by:_:)-(KeyPath<Model,ColumnReference<V>>,_)``.
public enum SortDirection: Sendable {
    /// Smallest first (`ASC`).
    case ascending
    /// Largest first (`DESC`).
    case descending
}

/// A chainable, lazy query over one model. Building it runs no SQL; each call returns a new
/// query; a terminal call (`all()`, `first()`, `count()`…) runs it.
///
/// ```swift
/// let page = try Person.where(["active": true])
///     .where("age >= ?", 18)
///     .where(\.$name, .like("J%"))
///     .order(by: \.$age, .descending).order(by: "name")
///     .page(2, size: 20)
/// ```
/// Column names given as strings are checked against the model when the query runs
/// (``ActiveObjectError/unknownColumn(table:column:)``, before any SQL exists); values are
/// always bound.
public struct Query<Model: ActiveObject> {
    var filters: [PredicateNode] = []
    var orderings: [(key: ColumnKey, direction: SortDirection)] = []
    var limitCount: Int?
    var offsetCount: Int?
    var preloaders: [Preloader<Model>] = []

    /// A query for every row of the model's table.
    public init() {}

    // MARK: Filtering

    /// Adds a filter from a criteria dictionary: the AND of `key = value`; an array value is
    /// `IN`, `nil` is `IS NULL`. Keys are property or column names.
    public func `where`(_ criteria: [String: Any?]) -> Query {
        adding(.criteria(criteria.map { (key: $0.key, value: $0.value) }))
    }

    /// Adds an SQL fragment with `?` arguments: `.where("age >= ? AND age < ?", 18, 65)`.
    /// The fragment is parenthesized and ANDed with the other filters.
    public func `where`(_ sql: String, _ arguments: any ColumnValue...) -> Query {
        adding(.sql(sql, arguments))
    }

    /// Adds an SQL fragment with an array of `?` arguments.
    public func `where`(_ sql: String, arguments: [any ColumnValue]) -> Query {
        adding(.sql(sql, arguments))
    }

    /// Adds a typed comparison: `.where(\.$name, .like("J%"))`.
    public func `where`<V>(_ column: KeyPath<Model, ColumnReference<V>>, _ comparison: ColumnOperator<V>) -> Query {
        adding(comparison.make(.keyPath(column)))
    }

    /// Adds a predicate built with operators: `.where(\.$age > 30 && \.$name == "Joe")`.
    public func `where`(_ predicate: QueryPredicate<Model>) -> Query {
        adding(predicate.node)
    }

    private func adding(_ node: PredicateNode) -> Query {
        var copy = self
        copy.filters.append(node)
        return copy
    }

    // MARK: Ordering and limits

    /// Orders by a column; several calls add further keys.
    public func order<V>(by column: KeyPath<Model, ColumnReference<V>>, _ direction: SortDirection = .ascending) -> Query {
        var copy = self
        copy.orderings.append((.keyPath(column), direction))
        return copy
    }

    /// Orders by a property or column name (checked against the model when the query runs).
    public func order(by column: String, _ direction: SortDirection = .ascending) -> Query {
        var copy = self
        copy.orderings.append((.name(column), direction))
        return copy
    }

    /// Returns at most `count` rows.
    public func limit(_ count: Int) -> Query {
        var copy = self
        copy.limitCount = count
        return copy
    }

    /// Skips the first `count` rows (works without a limit).
    public func offset(_ count: Int) -> Query {
        var copy = self
        copy.offsetCount = count
        return copy
    }

    // MARK: Building SQL

    struct Compiled {
        let schema: ModelSchema
        let database: Database
        let context: ValueContext
        let whereClause: String
        let orderClause: String
        let arguments: [DatabaseValue]
        let limitClause: String
        let limitArguments: [DatabaseValue]

        /// ` WHERE … ORDER BY … LIMIT ? OFFSET ?` and its arguments.
        var tail: String { whereClause + orderClause + limitClause }
        var tailArguments: [DatabaseValue] { arguments + limitArguments }
    }

    func compile() throws -> Compiled {
        let schema = try ModelSchema.of(Model.self)
        guard let database = Model.database else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        let context = schema.context(in: database)
        var renderer = PredicateRenderer(schema: schema, context: context)
        let conditions = try filters.map { try renderer.render($0) }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let orders = try orderings.map { "\(try $0.key.quoted(in: schema))\($0.direction == .descending ? " DESC" : "")" }
        let orderClause = orders.isEmpty ? "" : " ORDER BY " + orders.joined(separator: ", ")
        if let limitCount, limitCount < 0 { throw ActiveObjectError.invalidArgument("limit(\(limitCount)) is negative") }
        if let offsetCount, offsetCount < 0 { throw ActiveObjectError.invalidArgument("offset(\(offsetCount)) is negative") }
        var limitClause = ""
        var limitArguments: [DatabaseValue] = []
        if limitCount != nil || offsetCount != nil {
            // SQLite has no OFFSET without LIMIT: LIMIT -1 means "no limit".
            limitClause = " LIMIT ?"
            limitArguments.append(.integer(Int64(limitCount ?? -1)))
            if let offsetCount {
                limitClause += " OFFSET ?"
                limitArguments.append(.integer(Int64(offsetCount)))
            }
        }
        return Compiled(schema: schema, database: database, context: context, whereClause: whereClause,
                        orderClause: orderClause, arguments: renderer.arguments,
                        limitClause: limitClause, limitArguments: limitArguments)
    }

    // MARK: Terminals

    /// Every matching object, in order.
    public func all() throws -> [Model] {
        let compiled = try compile()
        let objects = try compiled.database.withConnection { connection in
            try connection.withStatement(compiled.schema.selectSQL + compiled.tail, compiled.tailArguments) { statement in
                let loader = ObjectLoader(canonicalFor: compiled.schema, context: compiled.context)
                var objects: [Model] = []
                while try statement.step() {
                    objects.append(unsafeDowncast(try loader.load(from: statement), to: Model.self))
                }
                return objects
            }
        }
        try preload(objects)
        return objects
    }

    /// The first matching object, or nil.
    public func first() throws -> Model? {
        try limit(1).all().first
    }

    /// The number of matching rows (respecting `limit` and `offset`).
    public func count() throws -> Int {
        let compiled = try compile()
        let sql: String
        if compiled.limitClause.isEmpty {
            sql = "SELECT count(*) FROM \(compiled.schema.quotedTable)\(compiled.whereClause)"
        } else {
            sql = "SELECT count(*) FROM (SELECT 1 FROM \(compiled.schema.quotedTable)\(compiled.tail))"
        }
        return try compiled.database.withConnection { connection in
            guard case .integer(let count)? = try connection.scalarValue(sql, compiled.tailArguments) else { return 0 }
            return Int(count)
        }
    }

    /// Whether any row matches.
    public func exists() throws -> Bool {
        let compiled = try compile()
        let sql = "SELECT EXISTS (SELECT 1 FROM \(compiled.schema.quotedTable)\(compiled.tail))"
        return try compiled.database.withConnection { connection in
            try connection.scalarValue(sql, compiled.tailArguments) == .integer(1)
        }
    }

    /// Deletes the matching rows (without running `willDelete`/`didDelete`) and returns how
    /// many were deleted.
    @discardableResult
    public func delete() throws -> Int {
        let compiled = try compile()
        let table = compiled.schema.quotedTable
        let sql: String
        if compiled.limitClause.isEmpty && compiled.orderClause.isEmpty {
            sql = "DELETE FROM \(table)\(compiled.whereClause)"
        } else {
            let key = compiled.schema.quotedPrimaryKey
            sql = "DELETE FROM \(table) WHERE \(key) IN (SELECT \(key) FROM \(table)\(compiled.tail))"
        }
        return try compiled.database.withConnection { connection in
            try connection.execute(sql, compiled.tailArguments)
            return connection.changes
        }
    }

    /// One page of results, 1-based: `page(3, size: 20)` is rows 41…60 of the query's filters
    /// and ordering (it replaces any `limit` and `offset`).
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` for a page below 1, a size below 1,
    ///   or a page beyond `Int`'s range.
    public func page(_ number: Int, size: Int) throws -> [Model] {
        guard number >= 1 else { throw ActiveObjectError.invalidArgument("page numbers start at 1, got \(number)") }
        guard size >= 1 else { throw ActiveObjectError.invalidArgument("page size must be at least 1, got \(size)") }
        let (skip, overflow) = (number - 1).multipliedReportingOverflow(by: size)
        guard !overflow else { throw ActiveObjectError.invalidArgument("page \(number) of size \(size) is out of range") }
        return try limit(size).offset(skip).all()
    }

    /// The values of one column for the matching rows, typed: `try q.pluck(\.$name)` is `[String]`.
    public func pluck<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> [V] {
        let compiled = try compile()
        let slot = try compiled.schema.slot(for: column)
        let name = compiled.schema.columns[slot].name
        let sql = "SELECT \(compiled.schema.columns[slot].quotedName), \(compiled.schema.quotedPrimaryKey) FROM \(compiled.schema.quotedTable)\(compiled.tail)"
        return try compiled.database.withConnection { connection in
            try connection.withStatement(sql, compiled.tailArguments) { statement in
                var values: [V] = []
                while try statement.step() {
                    let value = statement.value(at: 0)
                    guard let typed = V.fromDatabaseValue(value, in: compiled.context) else {
                        throw ActiveObjectError.typeMismatch(
                            table: compiled.schema.tableName, column: name,
                            rowID: statement.int64IfInteger(at: 1),
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
    /// `including(_:)`, a batch of ``preloadBatchSize`` rows, so that relations still load in
    /// one query per batch). The database is held for the whole iteration (other threads wait;
    /// `body` may use the database). If `body` throws, the iteration stops, the statement is
    /// reset, and the error is rethrown.
    public func each(_ body: (Model) throws -> Void) throws {
        let compiled = try compile()
        try compiled.database.withConnection { connection in
            try connection.withStatement(compiled.schema.selectSQL + compiled.tail, compiled.tailArguments) { statement in
                let loader = ObjectLoader(canonicalFor: compiled.schema, context: compiled.context)
                guard !preloaders.isEmpty else {
                    while try statement.step() {
                        try body(unsafeDowncast(try loader.load(from: statement), to: Model.self))
                    }
                    return
                }
                var batch: [Model] = []
                var more = true
                while more {
                    batch.removeAll(keepingCapacity: true)
                    while batch.count < Self.preloadBatchSize, try statement.step() {
                        batch.append(unsafeDowncast(try loader.load(from: statement), to: Model.self))
                    }
                    more = batch.count == Self.preloadBatchSize
                    try preload(batch)
                    for object in batch { try body(object) }
                }
            }
        }
    }

    /// A cursor that pulls matching objects one at a time:
    /// `while let person = try cursor.next() { … }`. See ``Cursor``.
    public func cursor() throws -> Cursor<Model> {
        let compiled = try compile()
        let preload: (([Model]) throws -> Void)? = preloaders.isEmpty ? nil : { try self.preload($0) }
        return try Cursor(sql: compiled.schema.selectSQL + compiled.tail, arguments: compiled.tailArguments,
                          schema: compiled.schema, database: compiled.database, context: compiled.context,
                          preload: preload, batchSize: Self.preloadBatchSize)
    }

    // MARK: Aggregates

    private func aggregate(_ function: String, _ slot: (ModelSchema) throws -> Int) throws -> (DatabaseValue, ValueContext, String) {
        let compiled = try compile()
        let column = compiled.schema.columns[try slot(compiled.schema)]
        let source = compiled.limitClause.isEmpty
            ? "\(compiled.schema.quotedTable)\(compiled.whereClause)"
            : "(SELECT \(column.quotedName) FROM \(compiled.schema.quotedTable)\(compiled.tail))"
        let sql = "SELECT \(function)(\(column.quotedName)) FROM \(source)"
        let value = try compiled.database.withConnection { try $0.scalarValue(sql, compiled.tailArguments) } ?? .null
        return (value, compiled.context, column.name)
    }

    private func typed<V: ColumnValue>(_ result: (DatabaseValue, ValueContext, String), as type: V.Type) throws -> V? {
        let (value, context, column) = result
        if value.isNull { return nil }
        guard let typed = V.fromDatabaseValue(value, in: context) else {
            throw ActiveObjectError.typeMismatch(table: Model.tableName, column: column, rowID: nil,
                                                 expected: String(describing: V.self), found: value.description)
        }
        return typed
    }

    /// The sum of a numeric column over the matching rows (0 when none match).
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> V {
        try typed(aggregate("sum") { try $0.slot(for: column) }, as: V.self) ?? .zero
    }

    /// The sum of an optional numeric column (NULLs ignored; 0 when none match).
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) throws -> V {
        try typed(aggregate("sum") { try $0.slot(for: column) }, as: V.self) ?? .zero
    }

    /// The smallest value of a column, or nil when no row matches.
    public func min<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> V? {
        try typed(aggregate("min") { try $0.slot(for: column) }, as: V.self)
    }

    /// The largest value of a column, or nil when no row matches.
    public func max<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> V? {
        try typed(aggregate("max") { try $0.slot(for: column) }, as: V.self)
    }

    /// The mean of a numeric column, or nil when no row matches. Only numeric columns
    /// (`Int`, `Double`, `Decimal`, …) compile: SQLite would average text as 0.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> Double? {
        try typed(aggregate("avg") { try $0.slot(for: column) }, as: Double.self)
    }

    /// The mean of an optional numeric column (NULLs ignored), or nil when no row has a value.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) throws -> Double? {
        try typed(aggregate("avg") { try $0.slot(for: column) }, as: Double.self)
    }
}
