/// A key path to a column's projection (`\.$age`), kept in queries.
///
/// Safety of @unchecked Sendable: key paths are immutable once formed. The standard library
/// does not mark `AnyKeyPath` `Sendable` because a key path may capture subscript arguments of
/// non-`Sendable` types; the ones ActiveObjects stores designate `@Column` projections (and
/// relations), which capture nothing, and are only ever read.
struct SendableKeyPath: @unchecked Sendable {
    let keyPath: AnyKeyPath
}

/// A column named by key path (`\.$age`) or by name (`"age"`), resolved against the model's
/// schema when the query runs: names that are not columns throw `unknownColumn`.
enum ColumnKey: Sendable {
    case keyPath(SendableKeyPath)
    case name(String)

    static func path(_ keyPath: AnyKeyPath) -> ColumnKey { .keyPath(SendableKeyPath(keyPath: keyPath)) }

    /// The schema slot (`-1` for the primary key).
    func slot(in schema: ModelSchema) throws -> Int {
        switch self {
        case .name(let name): return try schema.slot(forKey: name)
        case .keyPath(let path): return try schema.slot(for: path.keyPath)
        }
    }

    func quoted(in schema: ModelSchema) throws -> String {
        schema.quotedColumn(slot: try slot(in: schema))
    }
}

/// A condition on a model's columns, built with operators on `\.$column` key paths:
///
/// ```swift
/// let adultsNamedJoe = \Person.$age >= 18 && \Person.$name == "Joe"
/// try Person.where(adultsNamedJoe || \.$rating == nil).all()
/// ```
/// Comparing with `nil` (`== nil`, `!= nil`) becomes `IS NULL` / `IS NOT NULL`. Values are
/// always bound as arguments, never spliced into the SQL.
public struct QueryPredicate<Model: ActiveObject>: Sendable {
    let node: PredicateNode

    init(_ node: PredicateNode) { self.node = node }

    /// A predicate from an SQL fragment with `?` arguments: `QueryPredicate<Person>(sql: "age > ?", 30)`.
    public init(sql: String, _ arguments: (any ColumnValue)?...) {
        node = .sql(sql, arguments.nilsAsNull)
    }

    /// A predicate from an SQL fragment with an array of `?` arguments.
    public init(sql: String, arguments: [(any ColumnValue)?]) {
        node = .sql(sql, arguments.nilsAsNull)
    }
}

/// A value of a criteria dictionary (`["age": 30, "name": ["Ann", "Joe"], "rating": nil]`),
/// sorted out when the query is built.
enum CriteriaValue: Sendable {
    case null
    case value(any ColumnValue)
    case list([any ColumnValue])
    /// A value that is neither a column value nor an array of them: an error when the query runs.
    case unsupported(typeName: String)

    init(_ value: Any?) {
        guard let value else {
            self = .null
            return
        }
        if let list = value as? [any ColumnValue] {
            self = .list(list)
        } else if let single = value as? any ColumnValue {
            self = .value(single)
        } else {
            self = .unsupported(typeName: String(describing: type(of: value)))
        }
    }
}

/// The untyped tree behind ``QueryPredicate`` and the filters of a ``Query``.
indirect enum PredicateNode: Sendable {
    case compare(ColumnKey, String, any ColumnValue)
    case like(ColumnKey, String)
    /// `column LIKE pattern ESCAPE '\'`: a pattern made from literal text (see ``LikePattern``).
    case likeLiteral(ColumnKey, String)
    case inList(ColumnKey, [any ColumnValue])
    case isNull(ColumnKey, Bool)
    case and(PredicateNode, PredicateNode)
    case or(PredicateNode, PredicateNode)
    case not(PredicateNode)
    case sql(String, [any ColumnValue])
    case criteria([(key: String, value: CriteriaValue)])
    /// A filter that could not be built (e.g. a relation whose key path names no column): the
    /// query throws this error when it runs.
    case failure(any Error)
    /// A condition on related rows (`joining`): rendered by the relation, as a correlated
    /// `EXISTS (…)` subquery.
    case related(RelatedFilter)

    /// Whether the condition depends on the row it filters alone: no `joining` (a correlated
    /// subquery), no raw SQL (a subquery may read other rows of the same table; `'now'`,
    /// `random()` or a function of the app's may change its answer without the row changing).
    /// Live results re-read only the rows a commit changed under such filters.
    var isRowLocal: Bool {
        switch self {
        case .compare, .like, .likeLiteral, .inList, .isNull, .criteria, .failure:
            return true
        case .and(let left, let right), .or(let left, let right):
            return left.isRowLocal && right.isRowLocal
        case .not(let inner):
            return inner.isRowLocal
        case .sql, .related:
            return false
        }
    }

    /// A criteria dictionary, sorted by key (so the SQL, and its cached statement, is stable).
    static func criteria(_ dictionary: [String: Any?]) -> PredicateNode {
        .criteria(dictionary.map { (key: $0.key, value: CriteriaValue($0.value)) }.sorted { $0.key < $1.key })
    }
}

extension ModelSchema {
    /// Whether the column named by `key` holds `Decimal`s (stored as text, compared as numbers).
    func holdsDecimal(_ key: ColumnKey) throws -> Bool {
        let slot = try key.slot(in: self)
        return slot >= 0 && accessors[slot].holdsDecimal
    }
}

extension DatabaseValue {
    /// A decimal's stored text (or number) as a REAL, for numeric comparisons.
    var decimalAsReal: Double? {
        switch self {
        case .text(let text): return Double(text)
        case .integer(let int): return Double(int)
        case .real(let real): return real
        default: return nil
        }
    }
}

/// A condition on a model's related rows, rendered against the outer query's renderer.
struct RelatedFilter: Sendable {
    let render: @Sendable (inout PredicateRenderer) throws -> String
}

/// Renders predicates to SQL and arguments.
struct PredicateRenderer {
    let schema: ModelSchema
    let context: ValueContext
    /// Above this many values, an IN list is bound as one JSON array (`json_each`), so it
    /// never runs into SQLite's limit on bound variables.
    static let jsonListThreshold = 100

    var arguments: [DatabaseValue] = []
    /// The table alias columns are qualified with (inside a correlated subquery), if any.
    let qualifier: String?
    /// How many table aliases were handed out (`j1`, `j2`…), shared by nested renderers.
    var aliasCount = 0

    init(schema: ModelSchema, context: ValueContext, qualifier: String? = nil) {
        self.schema = schema
        self.context = context
        self.qualifier = qualifier
    }

    /// A fresh table alias for a subquery.
    mutating func newAlias() -> String {
        aliasCount += 1
        return "_j\(aliasCount)"
    }

    /// The column named by `key`, qualified when rendering inside a subquery.
    func column(_ key: ColumnKey) throws -> String {
        let quoted = try key.quoted(in: schema)
        return qualifier.map { "\(SQLIdentifier.quote($0)).\(quoted)" } ?? quoted
    }

    /// Renders `node`, a predicate on another model (`schema`), with its columns qualified by
    /// `alias`; its arguments and aliases continue this renderer's.
    mutating func render(_ node: PredicateNode, of schema: ModelSchema, as alias: String) throws -> String {
        var nested = PredicateRenderer(schema: schema, context: context, qualifier: alias)
        nested.aliasCount = aliasCount
        let sql = try nested.render(node)
        arguments += nested.arguments
        aliasCount = nested.aliasCount
        return sql
    }

    private func encode(_ value: any ColumnValue, column: String) throws -> DatabaseValue {
        do {
            return try value.databaseValue(in: context)
        } catch {
            throw ActiveObjectError.invalidValue(table: schema.tableName, column: column, reason: "\(error)")
        }
    }

    mutating func render(_ node: PredicateNode) throws -> String {
        switch node {
        case let .compare(key, op, value):
            let column = try column(key)
            let encoded = try encode(value, column: column)
            if encoded.isNull && (op == "=" || op == "<>") {
                return "\(column) \(op == "=" ? "IS NULL" : "IS NOT NULL")"
            }
            if op != "=" && op != "<>", try schema.holdsDecimal(key), let number = encoded.decimalAsReal {
                // Decimals are stored as exact text: order them as numbers, not as text
                // ("65.83" > "500" as text).
                arguments.append(.real(number))
                return "CAST(\(column) AS REAL) \(op) ?"
            }
            arguments.append(encoded)
            return "\(column) \(op) ?"
        case let .like(key, pattern):
            let column = try column(key)
            arguments.append(.text(pattern))
            return "\(column) LIKE ?"
        case let .likeLiteral(key, pattern):
            let column = try column(key)
            arguments.append(.text(pattern))
            return "\(column) LIKE ? ESCAPE '\\'"
        case let .inList(key, values):
            let column = try column(key)
            return try renderIn(column: column, values: values)
        case let .isNull(key, isNull):
            return "\(try column(key)) \(isNull ? "IS NULL" : "IS NOT NULL")"
        case let .and(lhs, rhs):
            return "(\(try render(lhs)) AND \(try render(rhs)))"
        case let .or(lhs, rhs):
            return "(\(try render(lhs)) OR \(try render(rhs)))"
        case let .not(inner):
            return "NOT (\(try render(inner)))"
        case let .sql(sql, values):
            arguments += try values.map { try encode($0, column: "(SQL fragment)") }
            return "(\(sql))"
        case let .criteria(pairs):
            return try renderCriteria(pairs)
        case let .failure(error):
            throw error
        case let .related(filter):
            return try filter.render(&self)
        }
    }

    private mutating func renderIn(column: String, values: [any ColumnValue]) throws -> String {
        let encoded = try values.map { try encode($0, column: column) }
        let nonNull = encoded.filter { !$0.isNull }
        let hasNull = nonNull.count != encoded.count
        var parts: [String] = []
        if nonNull.count > Self.jsonListThreshold {
            // json_each cannot carry every value (it truncates text at \u0000, and JSON has no
            // BLOB or infinity): those few are bound one by one beside the JSON array.
            let viaJSON = nonNull.filter(JSONList.canCarry)
            let separate = nonNull.filter { !JSONList.canCarry($0) }
            if !viaJSON.isEmpty {
                arguments.append(.text(try JSONList.encode(viaJSON, column: column, table: schema.tableName)))
                parts.append("\(column) IN (SELECT value FROM json_each(?))")
            }
            if !separate.isEmpty {
                arguments += separate
                parts.append("\(column) IN (\(Array(repeating: "?", count: separate.count).joined(separator: ", ")))")
            }
        } else if !nonNull.isEmpty {
            arguments += nonNull
            parts.append("\(column) IN (\(Array(repeating: "?", count: nonNull.count).joined(separator: ", ")))")
        }
        if hasNull { parts.append("\(column) IS NULL") }
        // An empty list matches nothing.
        if parts.isEmpty { return "0" }
        return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " OR ") + ")"
    }

    /// `["age": 30, "name": ["Joe", "Ann"], "rating": nil]` → AND of `=`, `IN`, `IS NULL`.
    private mutating func renderCriteria(_ pairs: [(key: String, value: CriteriaValue)]) throws -> String {
        if pairs.isEmpty { return "1" }
        var parts: [String] = []
        for (key, value) in pairs {
            let column = try self.column(.name(key))
            switch value {
            case .null:
                parts.append("\(column) IS NULL")
            case .list(let list):
                parts.append(try renderIn(column: column, values: list))
            case .value(let single):
                let encoded = try encode(single, column: column)
                if encoded.isNull {
                    parts.append("\(column) IS NULL")
                } else {
                    arguments.append(encoded)
                    parts.append("\(column) = ?")
                }
            case .unsupported(let typeName):
                throw ActiveObjectError.invalidArgument(
                    "the criteria value for \"\(key)\" (\(typeName)) is not a column value or an array of them")
            }
        }
        return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " AND ") + ")"
    }
}

/// Writes a list of values as a JSON array for `json_each`.
enum JSONList {
    /// Whether `json_each` gives back exactly this value.
    static func canCarry(_ value: DatabaseValue) -> Bool {
        switch value {
        case .null, .integer: return true
        case .real(let real): return real.isFinite
        case .text(let text): return !text.utf8.contains(0)
        case .blob: return false
        }
    }

    static func encode(_ values: [DatabaseValue], column: String, table: String) throws -> String {
        var parts: [String] = []
        parts.reserveCapacity(values.count)
        for value in values {
            switch value {
            case .null: parts.append("null")
            case .integer(let int): parts.append(String(int))
            case .real(let real) where real.isFinite: parts.append(String(real))
            case .text(let text): parts.append(quote(text))
            case .real, .blob:
                throw ActiveObjectError.invalidValue(
                    table: table, column: column,
                    reason: "IN lists of more than \(PredicateRenderer.jsonListThreshold) values cannot hold \(value)")
            }
        }
        return "[" + parts.joined(separator: ",") + "]"
    }

    private static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

// MARK: - Operators on columns

/// `\.$age == 30`; `\.$rating == nil` is `IS NULL`.
public func == <M: ActiveObject, V: ColumnValue>(lhs: KeyPath<M, ColumnReference<V>>, rhs: V) -> QueryPredicate<M> {
    QueryPredicate(.compare(.path(lhs), "=", rhs))
}
/// `\.$age != 30`; `\.$rating != nil` is `IS NOT NULL`.
public func != <M: ActiveObject, V: ColumnValue>(lhs: KeyPath<M, ColumnReference<V>>, rhs: V) -> QueryPredicate<M> {
    QueryPredicate(.compare(.path(lhs), "<>", rhs))
}
/// `\.$age < 30`.
public func < <M: ActiveObject, V: ColumnValue>(lhs: KeyPath<M, ColumnReference<V>>, rhs: V) -> QueryPredicate<M> {
    QueryPredicate(.compare(.path(lhs), "<", rhs))
}
/// `\.$age <= 30`.
public func <= <M: ActiveObject, V: ColumnValue>(lhs: KeyPath<M, ColumnReference<V>>, rhs: V) -> QueryPredicate<M> {
    QueryPredicate(.compare(.path(lhs), "<=", rhs))
}
/// `\.$age > 30`.
public func > <M: ActiveObject, V: ColumnValue>(lhs: KeyPath<M, ColumnReference<V>>, rhs: V) -> QueryPredicate<M> {
    QueryPredicate(.compare(.path(lhs), ">", rhs))
}
/// `\.$age >= 30`.
public func >= <M: ActiveObject, V: ColumnValue>(lhs: KeyPath<M, ColumnReference<V>>, rhs: V) -> QueryPredicate<M> {
    QueryPredicate(.compare(.path(lhs), ">=", rhs))
}
/// Both conditions: `(a AND b)`.
public func && <M: ActiveObject>(lhs: QueryPredicate<M>, rhs: QueryPredicate<M>) -> QueryPredicate<M> {
    QueryPredicate(.and(lhs.node, rhs.node))
}
/// Either condition: `(a OR b)`.
public func || <M: ActiveObject>(lhs: QueryPredicate<M>, rhs: QueryPredicate<M>) -> QueryPredicate<M> {
    QueryPredicate(.or(lhs.node, rhs.node))
}
/// The negation: `NOT (a)`.
public prefix func ! <M: ActiveObject>(predicate: QueryPredicate<M>) -> QueryPredicate<M> {
    QueryPredicate(.not(predicate.node))
}

/// A comparison for `where(\.$column, operator)`:
///
/// ```swift
/// Person.where(\.$name, .like("J%")).where(\.$age, .in([30, 31])).where(\.$rating, .notNull)
/// ```
public struct ColumnOperator<Value: ColumnValue>: Sendable {
    let make: @Sendable (ColumnKey) -> PredicateNode

    /// `column = value` (`IS NULL` for nil).
    public static func equal(_ value: Value) -> Self { Self { .compare($0, "=", value) } }
    /// `column <> value` (`IS NOT NULL` for nil).
    public static func notEqual(_ value: Value) -> Self { Self { .compare($0, "<>", value) } }
    /// `column < value`.
    public static func less(_ value: Value) -> Self { Self { .compare($0, "<", value) } }
    /// `column <= value`.
    public static func lessOrEqual(_ value: Value) -> Self { Self { .compare($0, "<=", value) } }
    /// `column > value`.
    public static func greater(_ value: Value) -> Self { Self { .compare($0, ">", value) } }
    /// `column >= value`.
    public static func greaterOrEqual(_ value: Value) -> Self { Self { .compare($0, ">=", value) } }
    /// `column LIKE pattern` (`%` any run, `_` one character; ASCII case-insensitive).
    public static func like(_ pattern: String) -> Self { Self { .like($0, pattern) } }
    /// The column's text contains `text`, as it is: `%`, `_` and `\` in `text` match themselves
    /// (`.contains("50%_off")` is no wildcard), ASCII letters in either case, like `LIKE`.
    public static func contains(_ text: String) -> Self { Self { .likeLiteral($0, LikePattern.anywhere(text)) } }
    /// The column's text starts with `text`, taken literally (see ``contains(_:)``).
    public static func hasPrefix(_ text: String) -> Self { Self { .likeLiteral($0, LikePattern.escaped(text) + "%") } }
    /// The column's text ends with `text`, taken literally (see ``contains(_:)``).
    public static func hasSuffix(_ text: String) -> Self { Self { .likeLiteral($0, "%" + LikePattern.escaped(text)) } }
    /// `column IN (values)`; an empty list matches nothing; long lists are bound as one JSON array.
    public static func `in`(_ values: [Value]) -> Self { Self { .inList($0, values) } }
    /// `column IS NULL`.
    public static var isNull: Self { Self { .isNull($0, true) } }
    /// `column IS NOT NULL`.
    public static var notNull: Self { Self { .isNull($0, false) } }
}

/// `LIKE` patterns made from literal text, with `\` as the escape character.
enum LikePattern {
    /// `text` with `\`, `%` and `_` escaped: each matches itself.
    static func escaped(_ text: String) -> String {
        var pattern = ""
        pattern.reserveCapacity(text.utf8.count)
        for character in text {
            if character == "\\" || character == "%" || character == "_" { pattern.append("\\") }
            pattern.append(character)
        }
        return pattern
    }

    /// `%text%`, `text` escaped.
    static func anywhere(_ text: String) -> String { "%" + escaped(text) + "%" }
}
