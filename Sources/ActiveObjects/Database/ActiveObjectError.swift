import Foundation

/// An error raised by ActiveObjects itself (as opposed to SQLite, which raises
/// ``DatabaseError``).
///
/// Every case names what went wrong, so its ``description`` can be shown as is:
///
/// ```swift
/// do { _ = try Person.find(where: ["nmae": "Joe"]) }
/// catch let error as ActiveObjectError { print(error) }
/// // Unknown column "nmae" for table "person"
/// ```
///
/// Errors compare equal case by case, so tests can name the error they expect:
/// `#expect(throws: ActiveObjectError.databaseClosed) { try db.execute("…") }`.
public enum ActiveObjectError: Error, CustomStringConvertible, LocalizedError, Sendable, Equatable {
    /// No row of `table` has primary key `id` (e.g. `update()` of a deleted row).
    case recordNotFound(table: String, id: Int64?)
    /// A criteria key, ordering or column name that the model does not declare.
    case unknownColumn(table: String, column: String)
    /// A stored value that does not fit its Swift property: NULL into a non-optional,
    /// `300` into `Int8`, text into `Int`, invalid UUID text, invalid JSON…
    case typeMismatch(table: String, column: String, rowID: Int64?, expected: String, found: String)
    /// The model has no database: set `ActiveObject.defaultDatabase` or override `database`.
    case noDatabase(model: String)
    /// `validate()` rejected the object; nothing was written.
    case validationFailed(ValidationError)
    /// A value that cannot be written, such as NaN or a `UInt64` above `Int64.max`.
    case invalidValue(table: String, column: String, reason: String)
    /// The model class cannot be mapped: an unsupported property type, two properties with
    /// the same column name, an empty or reserved name…
    case invalidModel(model: String, reason: String)
    /// SQL text the library refuses to run, e.g. two statements where one is expected.
    case invalidSQL(sql: String, reason: String)
    /// An argument outside its domain, e.g. `page(0, size: 20)`.
    case invalidArgument(String)
    /// The database was closed; it cannot be used any more.
    case databaseClosed
    /// A migration step failed; it was rolled back and not recorded.
    case migrationFailed(name: String, underlying: any Error)
    /// Two migration steps were registered under the same name.
    case duplicateMigration(name: String)
    /// An INSERT that SQLite ignored: it inserted nothing (a `UNIQUE … ON CONFLICT IGNORE`
    /// column, a `RAISE(IGNORE)` trigger, an `INSTEAD OF` trigger of a view that inserts
    /// elsewhere). The object was left new (`id` nil), so no later save can touch another row;
    /// `insertAll` wrote nothing.
    case notInserted(table: String)
    /// A call the library refuses because it would break its guarantees, with the reason:
    /// a write inside `db.read { }`, a raw `COMMIT` inside `db.transaction { }`, saving an
    /// object that was loaded without its primary key…
    case misuse(String)
    /// A synchronization request or reply that was refused whole, with nothing applied: a
    /// request a ``SyncHub`` cannot parse, of another protocol version, too large, naming a
    /// model or column the hub does not know, or another user's device; a reply a
    /// ``SyncEngine`` cannot read. The reason names what was wrong.
    case syncRefused(reason: String)
    /// Optimistic locking (``ColumnRole/lockVersion``): the row of `table` whose key is `key`
    /// (`"42"`, `"ALFKI"`, `"OrderID=10248, ProductID=11"`) changed or vanished since the object
    /// was loaded. Nothing was written and the object was left as it was: reload it, apply
    /// the edit again, and save.
    case staleObject(table: String, key: String)

    /// Whether two errors are the same case with equal details. Two `migrationFailed` errors
    /// are equal when their names are and their underlying errors are equal: by `==` when
    /// the underlying error is `Equatable`, else by type and description.
    public static func == (lhs: ActiveObjectError, rhs: ActiveObjectError) -> Bool {
        switch (lhs, rhs) {
        case let (.recordNotFound(t1, i1), .recordNotFound(t2, i2)): return t1 == t2 && i1 == i2
        case let (.unknownColumn(t1, c1), .unknownColumn(t2, c2)): return t1 == t2 && c1 == c2
        case let (.typeMismatch(t1, c1, r1, e1, f1), .typeMismatch(t2, c2, r2, e2, f2)):
            return t1 == t2 && c1 == c2 && r1 == r2 && e1 == e2 && f1 == f2
        case let (.noDatabase(m1), .noDatabase(m2)): return m1 == m2
        case let (.validationFailed(v1), .validationFailed(v2)): return v1 == v2
        case let (.invalidValue(t1, c1, r1), .invalidValue(t2, c2, r2)): return t1 == t2 && c1 == c2 && r1 == r2
        case let (.invalidModel(m1, r1), .invalidModel(m2, r2)): return m1 == m2 && r1 == r2
        case let (.invalidSQL(s1, r1), .invalidSQL(s2, r2)): return s1 == s2 && r1 == r2
        case let (.invalidArgument(r1), .invalidArgument(r2)): return r1 == r2
        case (.databaseClosed, .databaseClosed): return true
        case let (.migrationFailed(n1, u1), .migrationFailed(n2, u2)): return n1 == n2 && sameError(u1, u2)
        case let (.duplicateMigration(n1), .duplicateMigration(n2)): return n1 == n2
        case let (.misuse(r1), .misuse(r2)): return r1 == r2
        case let (.notInserted(t1), .notInserted(t2)): return t1 == t2
        case let (.syncRefused(r1), .syncRefused(r2)): return r1 == r2
        case let (.staleObject(t1, k1), .staleObject(t2, k2)): return t1 == t2 && k1 == k2
        default:
            // Different cases (a case added above without its pair here compares unequal).
            return false
        }
    }

    /// Whether two underlying errors are equal (see ``==(_:_:)``).
    private static func sameError(_ lhs: any Error, _ rhs: any Error) -> Bool {
        if let equatable = lhs as Any as? any Equatable { return equatable.isEqual(to: rhs) }
        return type(of: lhs) == type(of: rhs) && String(reflecting: lhs) == String(reflecting: rhs)
    }

    /// A readable explanation of the error.
    public var description: String {
        switch self {
        case let .recordNotFound(table, id):
            return "No row in table \"\(table)\" with id \(id.map(String.init) ?? "nil")"
        case let .unknownColumn(table, column):
            return "Unknown column \"\(column)\" for table \"\(table)\""
        case let .typeMismatch(table, column, rowID, expected, found):
            let row = rowID.map { "row id \($0)" } ?? "row without id"
            return "Cannot read \(table).\(column) (\(row)) as \(expected): found \(found)"
        case let .noDatabase(model):
            return "\(model) has no database: set ActiveObject.defaultDatabase or override \(model).database"
        case let .validationFailed(error):
            return "Validation failed: \(error)"
        case let .invalidValue(table, column, reason):
            return "Cannot write \(table).\(column): \(reason)"
        case let .invalidModel(model, reason):
            return "Model \(model) cannot be mapped: \(reason)"
        case let .invalidSQL(sql, reason):
            return "Invalid SQL `\(sql)`: \(reason)"
        case let .invalidArgument(reason):
            return "Invalid argument: \(reason)"
        case .databaseClosed:
            return "The database is closed"
        case let .migrationFailed(name, underlying):
            return "Migration \"\(name)\" failed and was rolled back: \(underlying)"
        case let .duplicateMigration(name):
            return "A migration named \"\(name)\" is already registered"
        case let .misuse(reason):
            return "Misuse: \(reason)"
        case let .syncRefused(reason):
            return "Synchronization refused: \(reason)"
        case let .staleObject(table, key):
            return "The row of \"\(table)\" with key \(key) changed or was deleted since this object was loaded (its lock version differs): nothing was written; reload the object and apply the change again"
        case let .notInserted(table):
            return "SQLite ignored the INSERT into \"\(table)\": no row was inserted (a constraint with ON CONFLICT IGNORE, a RAISE(IGNORE) trigger, or an INSTEAD OF trigger); the object is still new"
        }
    }

    /// The same text as ``description``, for `localizedDescription` and Apple's UI frameworks.
    public var errorDescription: String? { description }
}

/// A validation failure thrown from ``ActiveObject/validate()``: which field, and why.
///
/// ```swift
/// override func validate() throws {
///     if name.isEmpty { throw ValidationError("name", "must not be empty") }
/// }
/// ```
/// `save()` reports it as ``ActiveObjectError/validationFailed(_:)`` and writes nothing.
public struct ValidationError: Error, CustomStringConvertible, LocalizedError, Sendable, Equatable {
    /// The property (or concept) that is invalid.
    public let field: String
    /// What is wrong with it.
    public let message: String

    /// Creates a validation error for `field` with a human-readable `message`.
    public init(_ field: String, _ message: String) {
        self.field = field
        self.message = message
    }

    /// `"<field> <message>"`, e.g. `name must not be empty`.
    public var description: String { "\(field) \(message)" }

    /// The same text as ``description``.
    public var errorDescription: String? { description }
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    fileprivate func isEqual(to other: Any) -> Bool { (other as? Self).map { $0 == self } ?? false }
}
