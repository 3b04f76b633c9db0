import Foundation
import Testing
@testable import ActiveObjects

// Shared helpers for the model and query test suites.
//
// Swift Testing runs tests in parallel, so no test here touches
// `ActiveObject.defaultDatabase`. Instead every test model derives from `ModelTestRecord`,
// whose `database` is a task-local set for the duration of one test by `withModelDB`.
// A test's body runs synchronously inside its own task, so each test sees only its own
// private in-memory (or temporary file) database.

/// The per-test databases, as task-locals.
enum ModelTestDB {
    /// The database of `ModelTestRecord` models during a `withModelDB` body.
    @TaskLocal static var current: Database?
    /// A second database, for models of `ModelTestSecondRecord` (two databases in one process).
    @TaskLocal static var second: Database?
}

/// Base class of the test models: lives in the current test's database.
class ModelTestRecord: ActiveObject {
    override class var database: Database? { ModelTestDB.current }
}

/// Base class of test models that live in the test's second database.
class ModelTestSecondRecord: ActiveObject {
    override class var database: Database? { ModelTestDB.second }
}

/// Collects the SQL the trace hook reports. Thread-safe.
final class SQLRecorder: @unchecked Sendable {
    // Safety: `entries` is only touched while `lock` is held.
    private let lock = NSLock()
    private var entries: [String] = []
    /// While false, statements are not recorded.
    private var recording = true

    /// Every statement recorded so far, in order.
    var statements: [String] { lock.withLock { entries } }

    /// Statements that are not PRAGMAs (the schema machinery uses PRAGMA table_info).
    var nonPragma: [String] { statements.filter { !$0.uppercased().hasPrefix("PRAGMA") } }

    func append(_ sql: String) { lock.withLock { if recording { entries.append(sql) } } }

    func reset() { lock.withLock { entries.removeAll() } }

    /// The statements run by `body` only.
    func recording<T>(_ body: () throws -> T) rethrows -> (T, [String]) {
        reset()
        let result = try body()
        return (result, statements)
    }
}

/// Options that record SQL into `recorder`.
func modelTestOptions(recorder: SQLRecorder? = nil) -> Database.Options {
    var options = Database.Options()
    if let recorder {
        options.trace = { sql, _ in recorder.append(sql) }
    }
    return options
}

/// Runs `body` with a fresh in-memory database installed as the test models' database.
@discardableResult
func withModelDB<T>(recorder: SQLRecorder? = nil, second: Database? = nil,
                    _ body: (Database) throws -> T) throws -> T {
    let database = try Database.inMemory(options: modelTestOptions(recorder: recorder))
    defer { try? database.close() }
    recorder?.reset()   // forget the probe run while opening
    return try ModelTestDB.$current.withValue(database) {
        try ModelTestDB.$second.withValue(second) {
            try body(database)
        }
    }
}

/// Runs `body` with a fresh file database (WAL) in a temporary folder, removed afterwards.
@discardableResult
func withModelFileDB<T>(recorder: SQLRecorder? = nil, _ body: (Database, String) throws -> T) throws -> T {
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("activeobjects-model-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("test.sqlite").path
    var options = modelTestOptions(recorder: recorder)
    options.journalMode = .wal
    let database = try Database(path: path, options: options)
    defer { try? database.close() }
    recorder?.reset()   // forget the probe run while opening
    return try ModelTestDB.$current.withValue(database) { try body(database, path) }
}

/// The deterministic generator the model suites use (see `SeededGenerator`).
typealias ModelSeededGenerator = SeededGenerator

// MARK: - Error matching

extension ActiveObjectError {
    var isInvalidModel: Bool { if case .invalidModel = self { true } else { false } }
    var isRecordNotFound: Bool { if case .recordNotFound = self { true } else { false } }
    var isValidationFailed: Bool { if case .validationFailed = self { true } else { false } }
    var isInvalidValue: Bool { if case .invalidValue = self { true } else { false } }
    var isNoDatabase: Bool { if case .noDatabase = self { true } else { false } }

    /// The fields of a `typeMismatch`, or nil for another case.
    var typeMismatchFields: (table: String, column: String, rowID: Int64?, expected: String, found: String)? {
        if case let .typeMismatch(table, column, rowID, expected, found) = self {
            return (table, column, rowID, expected, found)
        }
        return nil
    }
}

/// Runs `body`, which must throw an `ActiveObjectError`, and returns that error.
func expectActiveObjectError(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> ActiveObjectError? {
    do {
        try body()
        Issue.record("expected an ActiveObjectError, nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as ActiveObjectError {
        return error
    } catch {
        Issue.record("expected an ActiveObjectError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Runs `body`, which must throw a `DatabaseError`, and returns it.
func expectDatabaseError(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> DatabaseError? {
    do {
        try body()
        Issue.record("expected a DatabaseError, nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as DatabaseError {
        return error
    } catch {
        Issue.record("expected a DatabaseError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The column names of a table, from `PRAGMA table_info`.
func modelTableColumns(_ db: Database, _ table: String) throws -> [String] {
    try db.rows("SELECT name FROM pragma_table_info(?)", [table]).map { try $0["name"] as String }
}

/// Number of rows in a table, counted with raw SQL.
func modelRowCount(_ db: Database, _ table: String) throws -> Int {
    try db.scalar("SELECT count(*) FROM \"\(table.replacingOccurrences(of: "\"", with: "\"\""))\"") ?? -1
}

struct ModelMissingID: Error, CustomStringConvertible {
    let object: String
    var description: String { "\(object) has no id" }
}

/// The object's id, or a thrown error (usable inside `#expect`/`#require`, which do not nest).
func requireID(_ object: ActiveObject) throws -> Int64 {
    guard let id = object.id else { throw ModelMissingID(object: "\(object)") }
    return id
}

// MARK: - A varied data set for query tests

/// The model the query, predicate, cursor and aggregate suites run against.
final class QueryPerson: ModelTestRecord {
    @Column var name = ""
    @Column var age = 0
    @Column var score: Double = 0
    @Column var active = true
    @Column var rating: Double? = nil
    @Column var city: String? = nil
    @Column var level: Int8 = 0
}

/// Plain values of a `QueryPerson`, for computing expectations in Swift.
struct QueryRow: Equatable {
    var id: Int64
    var name: String
    var age: Int
    var score: Double
    var active: Bool
    var rating: Double?
    var city: String?
    var level: Int8

    init(_ person: QueryPerson) {
        id = person.id ?? -1
        name = person.name; age = person.age; score = person.score; active = person.active
        rating = person.rating; city = person.city; level = person.level
    }
}

/// Creates the table and saves `count` varied rows from a seeded generator; returns them as
/// read back by `findAll()`.
@discardableResult
func seedQueryPeople(count: Int = 50, seed: UInt64 = 42) throws -> [QueryRow] {
    try QueryPerson.createTable()
    var random = ModelSeededGenerator(seed: seed)
    let names = ["Joe", "joan", "Ann", "anna", "Bob", "Eve", "Jim", "Zoë", "O'Hara", "Al_ice", "50%", "J"]
    let cities: [String?] = ["Paris", "Berlin", nil, "Rome", "paris", nil]
    let database = try #require(QueryPerson.database)
    try database.transaction {
        for index in 0..<count {
            let person = QueryPerson()
            person.name = names.randomElement(using: &random)! + (index % 7 == 0 ? "" : String(index % 5))
            person.age = Int.random(in: 0...90, using: &random)
            person.score = (Double.random(in: -100...100, using: &random) * 100).rounded() / 100
            person.active = Bool.random(using: &random)
            person.rating = index % 4 == 0 ? nil : Double(Int.random(in: 0...10, using: &random)) / 2
            person.city = cities.randomElement(using: &random)!
            person.level = Int8.random(in: -5...5, using: &random)
            try person.save()
        }
    }
    return try QueryPerson.findAll().map(QueryRow.init)
}

/// People for the tests of `$id`, `find(ids:)`, `first()` and the `arguments:` forms
/// (API.md §14): `seed()` saves Cid 35, Ann 25, Bob 41, Dee 19 (ids 1 to 4).
final class PolishPerson: ModelTestRecord {
    @Column var name = ""
    @Column var age = 0

    static func seed() throws {
        try PolishPerson.createTable()
        for (name, age) in [("Cid", 35), ("Ann", 25), ("Bob", 41), ("Dee", 19)] {
            let person = PolishPerson()
            person.name = name
            person.age = age
            try person.save()
        }
    }
}

/// Runs `body` in a transaction of `db` that then rolls back, undoing the body's writes; records
/// an issue unless the transaction ends with that rollback (an error of the body's own, too).
func inRolledBackTransaction(_ db: Database, sourceLocation: SourceLocation = #_sourceLocation,
                             _ body: () throws -> Void) {
    struct RollBack: Error {}
    #expect(throws: RollBack.self, sourceLocation: sourceLocation) {
        try db.transaction {
            try body()
            throw RollBack()
        }
    }
}
