import Foundation
import Testing
@testable import ActiveObjects

/// The library's errors read the same through `localizedDescription` (what Apple's UI
/// frameworks and most logging show) as through `description`.
@Suite struct ErrorDescriptionTests {
    static let activeObjectErrors: [ActiveObjectError] = [
        .recordNotFound(table: "person", id: 3),
        .unknownColumn(table: "person", column: "nmae"),
        .typeMismatch(table: "person", column: "age", rowID: 1, expected: "Int", found: "TEXT 'abc'"),
        .noDatabase(model: "Person"),
        .validationFailed(ValidationError("name", "must not be empty")),
        .invalidValue(table: "person", column: "score", reason: "NaN"),
        .invalidModel(model: "Person", reason: "why"),
        .invalidSQL(sql: "SELECT 1; SELECT 2", reason: "two statements"),
        .invalidArgument("page 0"),
        .databaseClosed,
        .migrationFailed(name: "001", underlying: ValidationError("x", "y")),
        .duplicateMigration(name: "001"),
    ]

    @Test(arguments: activeObjectErrors)
    func activeObjectErrorsLocalizeToTheirDescription(error: ActiveObjectError) {
        #expect(error.errorDescription == error.description)
        #expect(error.localizedDescription == error.description)
        #expect((error as any Error).localizedDescription == error.description)
    }

    /// Each error equals itself and no other in the list (each case once, details differ).
    @Test func activeObjectErrorsCompareCaseByCase() {
        let errors = Self.activeObjectErrors + [.misuse("a write in read")]
        for (i, lhs) in errors.enumerated() {
            for (j, rhs) in errors.enumerated() {
                #expect((lhs == rhs) == (i == j), "\(lhs) vs \(rhs)")
            }
        }
        #expect(ActiveObjectError.recordNotFound(table: "person", id: 3) != .recordNotFound(table: "person", id: 4))
        #expect(ActiveObjectError.unknownColumn(table: "a", column: "b") != .unknownColumn(table: "a", column: "c"))
        // An underlying error compares with `==` when it is Equatable, else by type and text.
        struct Opaque: Error { let code: Int }
        #expect(ActiveObjectError.migrationFailed(name: "1", underlying: ValidationError("x", "y"))
                == .migrationFailed(name: "1", underlying: ValidationError("x", "y")))
        #expect(ActiveObjectError.migrationFailed(name: "1", underlying: ValidationError("x", "y"))
                != .migrationFailed(name: "1", underlying: ValidationError("x", "z")))
        #expect(ActiveObjectError.migrationFailed(name: "1", underlying: Opaque(code: 1))
                == .migrationFailed(name: "1", underlying: Opaque(code: 1)))
        #expect(ActiveObjectError.migrationFailed(name: "1", underlying: Opaque(code: 1))
                != .migrationFailed(name: "1", underlying: Opaque(code: 2)))
        #expect(ActiveObjectError.migrationFailed(name: "1", underlying: Opaque(code: 1))
                != .migrationFailed(name: "1", underlying: ValidationError("x", "y")))
    }

    /// What a user writes to expect an error: the error value itself.
    @Test func expectedErrorsCanBeNamedInTests() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (x INTEGER UNIQUE)")
        try db.execute("INSERT INTO t VALUES (1)")
        let duplicate = DatabaseError(extendedResultCode: ResultCode(rawValue: 2067),
                                      message: "UNIQUE constraint failed: t.x", sql: "INSERT INTO t VALUES (1)")
        #expect(throws: duplicate) { try db.execute("INSERT INTO t VALUES (1)") }
        try db.close()
        #expect(throws: ActiveObjectError.databaseClosed) { try db.execute("SELECT 1") }
    }

    @Test func databaseErrorsLocalizeToTheirDescription() throws {
        let database = try Database.inMemory()
        do {
            try database.execute("SELEKT 1")
            Issue.record("no error")
        } catch let error as DatabaseError {
            #expect(error.errorDescription == error.description)
            #expect((error as any Error).localizedDescription == error.description)
            #expect(error.localizedDescription.contains("SELEKT 1"))
        }
    }

    @Test func validationAndValueErrorsLocalizeToTheirDescription() {
        let validation = ValidationError("name", "must not be empty")
        #expect((validation as any Error).localizedDescription == "name must not be empty")
        let value = ColumnValueError("NaN cannot be stored")
        #expect((value as any Error).localizedDescription == "NaN cannot be stored")
    }

    @Test func errorsAreLocalizedErrorsWithTheSameText() {
        let errors: [any Error] = [ActiveObjectError.misuse("x"), ActiveObjectError.databaseClosed,
                                   DatabaseError(extendedResultCode: .busy, message: "busy")]
        for error in errors {
            #expect((error as? LocalizedError)?.errorDescription == "\(error)")
            #expect(error.localizedDescription == "\(error)")
        }
    }
}
