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

    /// The query in the model's key order when it has no ordering of its own: by every key
    /// column of a natural or composite key (`"order_id", "product_id"`), or by the rowid
    /// column of a rowid model. `first()`, `findAll()`, pages and relations use this order.
    var orderedByKeyIfUnordered: Query {
        guard orderings.isEmpty, let schema = try? ModelSchema.of(Model.self) else { return self }
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
        /// The filters alone, joined by AND (empty without filters); their arguments are
        /// `arguments`.
        let conditions: String
        let orderClause: String
        /// The expressions of the ORDER BY clause, without their direction.
        let orderExpressions: [String]
        let arguments: [DatabaseValue]
        let limitClause: String
        let limitArguments: [DatabaseValue]

        /// ` WHERE … ORDER BY … LIMIT ? OFFSET ?` and its arguments.
        var tail: String { whereClause + orderClause + limitClause }
        var tailArguments: [DatabaseValue] { arguments + limitArguments }
        let isDistinct: Bool

        /// The model's SELECT with the whole tail.
        var selectSQL: String {
            isDistinct ? "SELECT DISTINCT \(sql.selectList) FROM \(schema.quotedTable)\(tail)" : sql.selectSQL + tail
        }
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
        let conditions = try filters.map { try renderer.render($0) }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let orderExpressions = try orderings.map { ordering -> String in
            let column = try ordering.key.quoted(in: schema)
            // Decimals are stored as exact text: sort them as numbers.
            return try schema.holdsDecimal(ordering.key) ? "CAST(\(column) AS REAL)" : column
        }
        let orders = zip(orderExpressions, orderings).map { expression, ordering in
            expression + (ordering.direction == .descending ? " DESC" : "")
        }
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
        return Compiled(schema: schema, database: database, sql: schema.sql(in: database), context: context,
                        whereClause: whereClause, conditions: conditions.joined(separator: " AND "),
                        orderClause: orderClause, orderExpressions: orderExpressions, arguments: renderer.arguments,
                        limitClause: limitClause, limitArguments: limitArguments, isDistinct: isDistinct)
    }
}
