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
///
/// A query is a `Sendable` value: build it anywhere, run it anywhere (every terminal also has
/// an `async` form that runs on the database's own threads).
public struct Query<Model: ActiveObject>: Sendable {
    var filters: [PredicateNode] = []
    var orderings: [(key: ColumnKey, direction: SortDirection)] = []
    var limitCount: Int?
    var offsetCount: Int?
    var preloaders: [Preloader<Model>] = []
    /// `SELECT DISTINCT` (see ``distinct()``).
    var isDistinct = false
    /// Which rows of a model with a `.deletedAt` column it reads (see ``withDeleted()``).
    var softDeleteScope = SoftDeleteScope.visible
    /// The words of ``search(_:)``: only the rows of the full-text index that match them.
    var searchPattern: SearchPattern?

    /// A query for every row of the model's table.
    public init() {}

    // MARK: Filtering

    /// Adds a filter from a criteria dictionary: the AND of `key = value`; an array value is
    /// `IN`, `nil` is `IS NULL`. Keys are property or column names.
    public func `where`(_ criteria: [String: Any?]) -> Query {
        adding(.criteria(criteria))
    }

    /// Adds an SQL fragment with `?` arguments: `.where("age >= ? AND age < ?", 18, 65)`.
    /// The fragment is parenthesized and ANDed with the other filters.
    public func `where`(_ sql: String, _ arguments: (any ColumnValue)?...) -> Query {
        adding(.sql(sql, arguments.nilsAsNull))
    }

    /// Adds an SQL fragment with an array of `?` arguments:
    /// `.where("age >= ?", arguments: [18])`.
    public func `where`(_ sql: String, arguments: [(any ColumnValue)?]) -> Query {
        adding(.sql(sql, arguments.nilsAsNull))
    }

    /// Adds a typed comparison: `.where(\.$name, .like("J%"))`.
    public func `where`<V>(_ column: KeyPath<Model, ColumnReference<V>>, _ comparison: ColumnOperator<V>) -> Query {
        adding(comparison.make(.path(column)))
    }

    /// Adds a predicate built with operators: `.where(\.$age > 30 && \.$name == "Joe")`.
    public func `where`(_ predicate: QueryPredicate<Model>) -> Query {
        adding(predicate.node)
    }

    func adding(_ node: PredicateNode) -> Query {
        var copy = self
        copy.filters.append(node)
        return copy
    }

    // MARK: Ordering and limits

    /// Orders by a column (`\.$id` for the primary key); several calls add further keys.
    public func order<V>(by column: KeyPath<Model, ColumnReference<V>>, _ direction: SortDirection = .ascending) -> Query {
        var copy = self
        copy.orderings.append((.path(column), direction))
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

    /// Removes duplicate rows from what the query selects: `Order.all.distinct().pluck(\.$shipCity)`
    /// gives each city once; `count(\.$shipCity)` counts the distinct cities. (Objects are
    /// distinct rows already: `all()` is unchanged.)
    public func distinct() -> Query {
        var copy = self
        copy.isDistinct = true
        return copy
    }

    // MARK: Soft delete

    /// The query with the rows soft-deleted too: for a model with a
    /// `@Column(role: .deletedAt)`, every query leaves out the rows whose `deletedAt` is not
    /// NULL unless it says `withDeleted()` (every row) or ``onlyDeleted()`` (those rows only).
    ///
    /// ```swift
    /// let everything = try Post.all.withDeleted().all()
    /// let drafts = try Post.where(\.$draft == true).withDeleted().count()
    /// ```
    /// Every terminal follows it: `all`, `first`, `count`, `exists`, `pluck`, `page`, `each`,
    /// `cursor`, the aggregates and `group(by:)`, `values()`, `changes()`, `liveResults()`,
    /// `updateAll` and `delete(permanently: true)`. (A soft `delete()` touches only rows not
    /// deleted yet, whatever the scope.) The last of `withDeleted()` and `onlyDeleted()`
    /// wins. Relations loaded with `including(_:)`, and those named by `joining(_:where:)`,
    /// keep their own scope: see ``HasMany/withDeleted()``.
    ///
    /// For a model without a `.deletedAt` column every row is read anyway: this changes nothing.
    public func withDeleted() -> Query { scoped(.withDeleted) }

    /// The query with only the rows soft-deleted (whose `deletedAt` is not NULL): the bin.
    ///
    /// ```swift
    /// let bin = try Post.all.onlyDeleted().order(by: \.$deletedAt, .descending).all()
    /// try Post.all.onlyDeleted().delete(permanently: true)      // empties the bin
    /// try Post.all.onlyDeleted().updateAll(["deletedAt": nil])   // restores every row in it
    /// ```
    /// The query throws ``ActiveObjectError/invalidArgument(_:)`` when it runs if the model has
    /// no `@Column(role: .deletedAt)` (none of its rows can be in a bin: the query is a
    /// mistake). The last of ``withDeleted()`` and `onlyDeleted()` wins.
    public func onlyDeleted() -> Query { scoped(.onlyDeleted) }

    /// The query with its soft-delete scope replaced.
    func scoped(_ scope: SoftDeleteScope) -> Query {
        var copy = self
        copy.softDeleteScope = scope
        return copy
    }

    /// The query in the model's key order when it has no ordering of its own: by every key
    /// column of a natural or composite key (`"order_id", "product_id"`), or by the rowid
    /// column of a rowid model. `first()`, `findAll()`, pages and relations use this order.
    var orderedByKeyIfUnordered: Query {
        // A search is ordered by relevance unless it says otherwise.
        guard orderings.isEmpty, searchPattern == nil, let schema = try? ModelSchema.of(Model.self) else { return self }
        if schema.keySlots.isEmpty { return order(by: schema.primaryKey) }
        return schema.keySlots.reduce(self) { query, slot in query.order(by: schema.columns[slot].name) }
    }

    // MARK: Building SQL

    struct Compiled: Sendable {
        let schema: ModelSchema
        let database: Database
        /// The model's SQL for its table as it is in `database`.
        let sql: ModelSQL
        let context: ValueContext
        let whereClause: String
        /// The filters alone, joined by AND (empty without filters), the soft-delete scope's
        /// condition included; their arguments are `arguments`.
        let conditions: String
        let orderClause: String
        /// The expressions of the ORDER BY clause, without their direction.
        let orderExpressions: [String]
        let arguments: [DatabaseValue]
        let limitClause: String
        let limitArguments: [DatabaseValue]

        /// What the query reads from: the quoted table, or for a search the table's matching
        /// rows joined with their rank, under the table's name (see ``Query/searchSource(_:schema:)``).
        let source: String
        /// Whether the query is a ``Query/search(_:)`` (`source` is not the table).
        let searches: Bool

        /// ` WHERE … ORDER BY … LIMIT ? OFFSET ?` and its arguments.
        var tail: String { whereClause + orderClause + limitClause }
        var tailArguments: [DatabaseValue] { arguments + limitArguments }
        let isDistinct: Bool

        /// The model's SELECT with the whole tail.
        var selectSQL: String {
            isDistinct || searches ? "\(selectKeyword) \(sql.selectList) FROM \(source)\(tail)" : sql.selectSQL + tail
        }
        /// The quoted column of a slot, where `-1` (the key, `\.$id`) is the id expression of the
        /// table as it is: `NULL` for a view without the key column, or a `WITHOUT ROWID` file.
        func quotedColumn(slot: Int) -> String { schema.quotedColumn(slot: slot, in: sql) }

        /// `SELECT` or `SELECT DISTINCT`.
        var selectKeyword: String { isDistinct ? "SELECT DISTINCT" : "SELECT" }
    }

    /// The SQL pieces of the query, checked against the model.
    /// - Throws: ``ActiveObjectError/unknownColumn(table:column:)``, ``ActiveObjectError/invalidValue(table:column:reason:)``,
    ///   ``ActiveObjectError/invalidArgument(_:)`` (negative limit or offset),
    ///   ``ActiveObjectError/noDatabase(model:)``, ``ActiveObjectError/invalidModel(model:reason:)``.
    func compile() throws -> Compiled {
        let schema = try ModelSchema.of(Model.self)
        guard let database = Model.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        let context = schema.context(in: database)
        var renderer = PredicateRenderer(schema: schema, context: context)
        var conditions = try filters.map { try renderer.render($0) }
        // Soft delete: one branch per compile for models without the role, nothing per row.
        // Last, and without arguments: numbered parameters of raw fragments keep their numbers.
        if let softDelete = try schema.softDeleteCondition(softDeleteScope) { conditions.append(softDelete) }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let sql = schema.sql(in: database)
        var orderExpressions = try orderings.map { ordering -> String in
            let slot = try ordering.key.slot(in: schema)
            // A view without a key column has no id to order by (`first()`, pages): `NULL`.
            let column = schema.quotedColumn(slot: slot, in: sql)
            // Decimals are stored as exact text: sort them as numbers.
            return try schema.holdsDecimal(ordering.key) ? "CAST(\(column) AS REAL)" : column
        }
        let orders = zip(orderExpressions, orderings).map { expression, ordering in
            expression + (ordering.direction == .descending ? " DESC" : "")
        }
        var orderClause = orders.isEmpty ? "" : " ORDER BY " + orders.joined(separator: ", ")
        var source = schema.quotedTable
        if let searchPattern {
            source = try Self.searchSource(searchPattern, schema: schema)
            // Best match first, unless the query orders by something else.
            if orders.isEmpty {
                orderClause = " ORDER BY \(Self.rankColumn)"
                orderExpressions = [Self.rankColumn]
            }
        }
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
        return Compiled(schema: schema, database: database, sql: sql, context: context,
                        whereClause: whereClause, conditions: conditions.joined(separator: " AND "),
                        orderClause: orderClause, orderExpressions: orderExpressions, arguments: renderer.arguments,
                        limitClause: limitClause, limitArguments: limitArguments,
                        source: source, searches: searchPattern != nil, isDistinct: isDistinct)
    }
}

/// Which rows of a model with a `@Column(role: .deletedAt)` a query (or a relation) reads.
/// For a model without one, every row whatever the scope (`onlyDeleted` is refused).
enum SoftDeleteScope: Sendable, Hashable, CaseIterable {
    /// The rows whose `deletedAt` is NULL: the default.
    case visible
    /// Every row (`withDeleted()`).
    case withDeleted
    /// The rows whose `deletedAt` is not NULL (`onlyDeleted()`).
    case onlyDeleted
}

extension ModelSchema {
    /// The condition keeping the rows `scope` reads (`"deletedAt" IS NULL`…), its column
    /// qualified by `qualifier` (a table alias) if given; nil when every row is read (no
    /// `.deletedAt` column, or `withDeleted`).
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` for `onlyDeleted` of a model
    ///   without a `.deletedAt` column.
    func softDeleteCondition(_ scope: SoftDeleteScope, qualifier: String? = nil) throws -> String? {
        guard let slot = roles.deletedAt else {
            if scope == .onlyDeleted {
                throw ActiveObjectError.invalidArgument(
                    "onlyDeleted(): \(modelName) has no @Column(role: .deletedAt), so none of its rows is soft-deleted")
            }
            return nil
        }
        let column = qualifier.map { "\(SQLIdentifier.quote($0)).\(columns[slot].quotedName)" } ?? columns[slot].quotedName
        switch scope {
        case .visible: return "\(column) IS NULL"
        case .onlyDeleted: return "\(column) IS NOT NULL"
        case .withDeleted: return nil
        }
    }
}
