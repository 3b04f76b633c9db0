import Foundation
import Testing
@testable import ActiveObjects

/// Typed access to the rows of raw queries.
@Suite struct RowTests {
    let db: Database

    init() throws {
        db = try Database.inMemory()
        try db.execute("CREATE TABLE person(id INTEGER PRIMARY KEY, Name TEXT, age INTEGER, rating REAL)")
        try db.execute("INSERT INTO person(Name, age, rating) VALUES (?, ?, ?)", ["Joe", 30, 4.5])
        try db.execute("INSERT INTO person(Name, age, rating) VALUES (?, ?, ?)", ["Ann", 41, nil as Double?])
    }

    @Test func subscriptsByNameAreTypedAndCaseInsensitive() throws {
        let rows = try db.rows("SELECT id, Name, age, rating FROM person ORDER BY id")
        #expect(rows.count == 2)
        let joe = rows[0]
        #expect(try joe["Name"] as String == "Joe")
        #expect(try joe["name"] as String == "Joe")
        #expect(try joe["NAME"] as String == "Joe")
        #expect(try joe["AGE"] as Int == 30)
        #expect(try joe["age"] as Int64 == 30)
        #expect(try joe["rating"] as Double == 4.5)
        #expect(try rows[1]["rating"] as Double? == nil)
        #expect(joe.hasColumn("nAmE"))
        #expect(!joe.hasColumn("email"))
        #expect(joe.columnNames == ["id", "Name", "age", "rating"])
        #expect(joe.count == 4)
    }

    @Test func subscriptsByIndex() throws {
        let row = try #require(try db.rows("SELECT Name, age, rating FROM person WHERE age = ?", [30]).first)
        #expect(try row[0] as String == "Joe")
        #expect(try row[1] as Int == 30)
        #expect(try row[2] as Double == 4.5)
        #expect(row.values == [.text("Joe"), .integer(30), .real(4.5)])
        // Index and name give the same value.
        for (index, name) in row.columnNames.enumerated() {
            #expect(try row[index] as DatabaseValue == row[name] as DatabaseValue)
        }
    }

    @Test func aliasesAndDuplicateNames() throws {
        let row = try #require(try db.rows("SELECT age AS years, age * 2 AS Years, Name AS name FROM person WHERE age = 30").first)
        // The first of duplicate names wins; an exact-case match is preferred.
        #expect(try row["years"] as Int == 30)
        #expect(try row["Years"] as Int == 60)
        #expect(try row["YEARS"] as Int == 30)
        #expect(try row["name"] as String == "Joe")
    }

    @Test func unknownColumnThrows() throws {
        let row = try #require(try db.rows("SELECT Name FROM person").first)
        let error = expectActiveObjectError({ _ = try row["nmae"] as String }, matches: \.isUnknownColumn)
        #expect(error?.description.contains("nmae") == true)
    }

    @Test func indexOutOfRangeThrows() throws {
        let row = try #require(try db.rows("SELECT Name, age FROM person").first)
        for index in [2, 100, -1, Int.min] {
            expectActiveObjectError({ _ = try row[index] as String }, matches: \.isInvalidArgument)
        }
        #expect(try row[1] as Int == 30)
    }

    @Test func typeMismatchNamesTheColumn() throws {
        let row = try #require(try db.rows("SELECT Name, age FROM person").first)
        let error = try #require(expectActiveObjectError({ _ = try row["Name"] as Int }, matches: \.isTypeMismatch))
        guard case let .typeMismatch(_, column, _, expected, found) = error else { return }
        #expect(column == "Name")
        #expect(expected == "Int")
        #expect(found == DatabaseValue.text("Joe").description)
        let byIndex = try #require(expectActiveObjectError({ _ = try row[0] as Double }, matches: \.isTypeMismatch))
        guard case let .typeMismatch(_, indexColumn, _, _, _) = byIndex else { return }
        #expect(indexColumn == "Name")
    }

    @Test func emptyResultHasNoRows() throws {
        #expect(try db.rows("SELECT * FROM person WHERE age > ?", [1000]).isEmpty)
    }

    @Test func descriptionListsNamesAndValues() throws {
        let row = try #require(try db.rows("SELECT Name, age FROM person WHERE age = 30").first)
        #expect(row.description == "[Name: \(DatabaseValue.text("Joe")), age: \(DatabaseValue.integer(30))]")
    }

    @Test func rowsAreSendableValues() async throws {
        let rows = try await db.rows("SELECT Name FROM person ORDER BY id")
        let names = try await Task.detached { try rows.map { try $0["name"] as String } }.value
        #expect(names == ["Joe", "Ann"])
    }
}
