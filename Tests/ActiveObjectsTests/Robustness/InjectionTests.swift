import Foundation
import Testing
@testable import ActiveObjects

/// Hostile keys, values, identifiers and SQL: nothing is spliced into SQL, nothing extra runs.
@Suite struct InjectionTests {
    final class Person: ModelTestRecord {
        @Column var name = ""
        @Column var age = 0
    }

    final class Victim: ModelTestRecord {
        @Column var secret = "s"
    }

    /// A table and a column whose names need quoting.
    final class Weird: ModelTestRecord {
        override class var tableName: String { #"we"ird table; DROP TABLE victim; --"# }
        @Column(#"co"l umn"#) var value = ""
        @Column("select") var keyword = 0
    }

    static let hostileKeys = [
        "a = 1 OR 1=1",
        #"x"; DROP TABLE t; --"#,
        "",
        "select",
        "name\0",
        "name; DROP TABLE victim",
        #"name" = "name"#,
        "NAME ",
        "1",
        "*",
    ]

    private func seed(_ db: Database) throws {
        try Person.createTable()
        try Victim.createTable()
        try db.execute("CREATE TABLE t (x)")
        for (name, age) in [("Joe", 30), ("Ann", 31)] {
            let person = Person(); person.name = name; person.age = age
            try person.save()
        }
        try Victim().save()
    }

    private func expectIntact(_ db: Database, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try modelRowCount(db, "person") == 2, sourceLocation: sourceLocation)
        #expect(try modelRowCount(db, "victim") == 1, sourceLocation: sourceLocation)
        #expect(try modelRowCount(db, "t") == 0, sourceLocation: sourceLocation)
        #expect(try Person.findAll().map(\.name) == ["Joe", "Ann"], sourceLocation: sourceLocation)
    }

    @Test(arguments: hostileKeys)
    func hostileKeysAreUnknownColumnsAndNoSQLRuns(key: String) throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try seed(db)
            recorder.reset()
            let uses: [(String, () throws -> Void)] = [
                ("find(where:)", { _ = try Person.find(where: [key: 1]) }),
                ("find(where:) nil", { _ = try Person.find(where: [key: nil]) }),
                ("find(where:) array", { _ = try Person.find(where: [key: [1, 2]]) }),
                ("findFirst", { _ = try Person.findFirst(where: [key: "x"]) }),
                ("count(where:)", { _ = try Person.count(where: [key: 1]) }),
                ("delete(where:)", { _ = try Person.delete(where: [key: 1]) }),
                ("where.exists", { _ = try Person.where([key: 1]).exists() }),
                ("order(by:)", { _ = try Person.order(by: key).all() }),
                ("order(by:).delete", { _ = try Person.all.order(by: key).limit(1).delete() }),
            ]
            for (label, use) in uses {
                let error = expectActiveObjectError(use)
                guard case let .unknownColumn(table, column)? = error else {
                    Issue.record("\(label) with key \(key.debugDescription): got \(String(describing: error))")
                    continue
                }
                #expect(table == "person")
                #expect(column == key)
            }
            #expect(recorder.statements.isEmpty, "no SQL ran for \(key.debugDescription): \(recorder.statements)")
            try expectIntact(db)
        }
    }

    static let hostileValues = [
        "' OR '1'='1",
        "Joe' --",
        "x'; DROP TABLE victim; --",
        #"" OR 1=1 --"#,
        "Joe\0",
        "Joe\0' OR 1=1",
        "%",
        "1; DELETE FROM person",
        "?",
        "NULL",
    ]

    @Test(arguments: hostileValues)
    func hostileValuesMatchNothingAndChangeNothing(value: String) throws {
        try withModelDB { db in
            try seed(db)
            #expect(try Person.find(where: ["name": value]).isEmpty)
            #expect(try Person.find(where: ["name": [value, value + "x"]]).isEmpty)
            #expect(try Person.count(where: ["name": value]) == 0)
            #expect(try Person.findFirst(where: ["name": value]) == nil)
            #expect(try Person.where(\.$name == value).count() == 0)
            #expect(try Person.where(\.$name, .in([value])).count() == 0)
            #expect(try Person.where("name = ?", value).count() == 0)
            #expect(try Person.fetch(sql: "SELECT * FROM person WHERE name = ?", [value]).isEmpty)
            #expect(try Person.delete(where: ["name": value]) == 0)
            #expect(try Person.where(\.$name == value).delete() == 0)
            try expectIntact(db)

            // Stored as a value, read back byte for byte.
            let stored = Person(); stored.name = value
            try stored.save()
            #expect(try Person.find(id: try requireID(stored))?.name == value)
            #expect(try Person.find(where: ["name": value]).map(\.id) == [stored.id])
            #expect(try Person.delete(where: ["name": value]) == 1)
            try expectIntact(db)
        }
    }

    @Test func quotedIdentifiersWithQuotesAndKeywordsWork() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Victim.createTable()
            try Victim().save()
            try Weird.createTable()
            let weird = Weird(); weird.value = "v"; weird.keyword = 1
            try weird.save()
            weird.keyword = 2
            try weird.save()
            #expect(try Weird.find(where: [#"co"l umn"#: "v"]).count == 1)
            #expect(try Weird.find(where: ["value": "v"]).first?.keyword == 2)
            #expect(try Weird.all.order(by: "select").pluck(\.$value) == ["v"])
            #expect(try Weird.where(\.$keyword == 2).delete() == 1)
            #expect(try modelRowCount(db, "victim") == 1)
            let tables = try db.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .map { try $0["name"] as String }
            #expect(tables.contains(#"we"ird table; DROP TABLE victim; --"#))
            #expect(recorder.statements.contains(#"UPDATE "we""ird table; DROP TABLE victim; --" SET "select" = ? WHERE "id" = ?"#),
                    "\(recorder.statements)")
        }
    }

    @Test func stackedStatementsInRawSQLAreRefusedAndNothingRuns() throws {
        try withModelDB { db in
            try seed(db)
            #expect(throws: (any Error).self) {
                _ = try Person.fetch(sql: "SELECT * FROM person; DROP TABLE victim")
            }
            #expect(throws: (any Error).self) {
                _ = try Person.where("1; DROP TABLE victim; --").all()
            }
            // Note: a fragment passed to where(_:_:) is the developer's own SQL (only its
            // arguments are data), so it is not checked for balanced parentheses.
            try expectIntact(db)
        }
    }

    @Test func aMisspelledQuotedColumnInAFragmentIsAnErrorNotAString() throws {
        try withModelDB { db in
            try seed(db)
            // With double-quoted string literals enabled, "nmae" would be the string 'nmae'.
            let error = expectDatabaseError { _ = try Person.where(#""nmae" = 'nmae'"#).all() }
            #expect(error?.resultCode == .error)
            try expectIntact(db)
        }
    }
}
