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
}
