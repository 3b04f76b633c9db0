import Foundation
import Testing
@testable import ActiveObjects

/// find(id:), findAll, find(where:), findFirst, counts, deletes, fetch(sql:), and errors when reading.
@Suite struct FinderTests {
    final class Person: ModelTestRecord {
        @Column var name = ""
        @Column var age = 0
        @Column var active = true
        @Column var rating: Double? = nil
    }

    /// Saves Joe 30, Ann 31 (rating 4), Bob 30 (inactive), Eve 40 (rating 2).
    private func seed() throws -> [Person] {
        try Person.createTable()
        let rows: [(String, Int, Bool, Double?)] = [("Joe", 30, true, nil), ("Ann", 31, true, 4),
                                                     ("Bob", 30, false, nil), ("Eve", 40, true, 2)]
        return try rows.map { name, age, active, rating in
            let person = Person(); person.name = name; person.age = age; person.active = active
            person.rating = rating
            try person.save()
            return person
        }
    }

    @Test func findByIDAndFindAll() throws {
        try withModelDB { _ in
            let people = try seed()
            let ann = try #require(try Person.find(id: try requireID(people[1])))
            #expect(ann.name == "Ann" && ann.age == 31 && ann.rating == 4)
            #expect(ann.id == people[1].id)
            #expect(try Person.find(id: 999) == nil)
            #expect(try Person.find(id: -1) == nil)
            #expect(try Person.findAll().map(\.name) == ["Joe", "Ann", "Bob", "Eve"])
            #expect(try Person.findAll().map(\.id) == people.map(\.id))
        }
    }

    @Test func findWhereCriteria() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            _ = try seed()
            #expect(Set(try Person.find(where: ["age": 30]).map(\.name)) == ["Joe", "Bob"])
            #expect(try Person.find(where: ["age": 30, "active": true]).map(\.name) == ["Joe"])
            #expect(Set(try Person.find(where: ["age": [30, 31]]).map(\.name)) == ["Joe", "Ann", "Bob"])
            #expect(Set(try Person.find(where: ["rating": nil]).map(\.name)) == ["Joe", "Bob"])
            #expect(try Person.find(where: ["age": [30, 31], "rating": nil, "active": false]).map(\.name) == ["Bob"])
            #expect(try Person.find(where: ["age": [Int]()]).isEmpty, "an empty array matches nothing")
            #expect(try Person.find(where: ["rating": [4.0, 2.0]]).count == 2)
            #expect(try Person.find(where: [:]).count == 4)
            #expect(try Person.find(where: ["name": "joe"]).isEmpty, "= is case-sensitive")

            recorder.reset()
            _ = try Person.find(where: ["age": [30, 31], "rating": nil])
            let select = try #require(recorder.statements.last)
            #expect(select.contains(#""age" IN (?, ?)"#), "\(select)")
            #expect(select.contains(#""rating" IS NULL"#), "\(select)")
            #expect(!select.contains("30") && !select.contains("31"), "values are bound: \(select)")
        }
    }

    @Test func findFirstCountDelete() throws {
        try withModelDB { db in
            let people = try seed()
            #expect(try Person.findFirst(where: ["age": 30])?.id == people[0].id, "lowest id first")
            #expect(try Person.findFirst(where: ["age": 99]) == nil)
            #expect(try Person.countAll() == 4)
            #expect(try Person.count(where: ["active": true]) == 3)
            #expect(try Person.count(where: ["rating": nil]) == 2)
            #expect(try Person.count(where: ["age": [30, 40]]) == 3)
            #expect(try Person.delete(where: ["active": false]) == 1)
            #expect(try Person.delete(where: ["active": false]) == 0)
            #expect(try Person.countAll() == 3)
            #expect(try Person.deleteAll() == 3)
            #expect(try Person.deleteAll() == 0)
            #expect(try modelRowCount(db, "person") == 0)
        }
    }

    @Test func fetchSQLMapsByNameIgnoresExtrasAndKeepsDefaultsForMissingColumns() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            _ = try seed()
            let older = try Person.fetch(sql: "SELECT * FROM person WHERE age > ? ORDER BY age", [30])
            #expect(older.map(\.name) == ["Ann", "Eve"])
            #expect(older.allSatisfy { !$0.hasChanges })

            // Different order, different case, an extra column, and no "age"/"active"/"rating".
            let partial = try Person.fetch(sql: "SELECT 'x' AS extra, NAME, ID FROM person WHERE name = ?", ["Eve"])
            let eve = try #require(partial.first)
            #expect(eve.name == "Eve")
            #expect(eve.age == 0 && eve.active == true && eve.rating == nil, "missing columns keep their defaults")
            #expect(eve.id != nil)
            #expect(eve.hasChanges == false, "missing columns are not changes")

            eve.name = "Eva"
            recorder.reset()
            try eve.save()
            #expect(recorder.statements == [#"UPDATE "person" SET "name" = ? WHERE "id" = ?"#])
            let stored = try #require(try Person.find(id: try requireID(eve)))
            #expect(stored.name == "Eva" && stored.age == 40 && stored.rating == 2, "missing columns were not written back")

            // Expressions and aliases map by name.
            let aliased = try Person.fetch(sql: "SELECT id, name || '!' AS name, age * 2 AS age FROM person WHERE id = 1")
            #expect(aliased.first?.name == "Joe!" && aliased.first?.age == 60)
            #expect(try modelRowCount(db, "person") == 4)
        }
    }

    // MARK: Unknown keys

    @Test func unknownKeysThrowBeforeAnySQLRuns() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            _ = try seed()
            recorder.reset()
            let attempts: [(String, () throws -> Void)] = [
                ("find(where:)", { _ = try Person.find(where: ["nmae": "Joe"]) }),
                ("findFirst", { _ = try Person.findFirst(where: ["age": 30, "nmae": "Joe"]) }),
                ("count(where:)", { _ = try Person.count(where: ["nmae": 1]) }),
                ("delete(where:)", { _ = try Person.delete(where: ["nmae": 1]) }),
                ("where.all", { _ = try Person.where(["nmae": 1]).all() }),
                ("order(by:)", { _ = try Person.order(by: "nmae").all() }),
                ("where.delete", { _ = try Person.where(["age": 30]).order(by: "nmae").delete() }),
            ]
            for (label, attempt) in attempts {
                let error = expectActiveObjectError(attempt)
                guard case let .unknownColumn(table, column)? = error else {
                    Issue.record("\(label): expected unknownColumn, got \(String(describing: error))"); continue
                }
                #expect(table == "person", "\(label)")
                #expect(column == "nmae", "\(label)")
            }
            #expect(recorder.statements.isEmpty, "no SQL ran: \(recorder.statements)")
            #expect(try modelRowCount(db, "person") == 4)
        }
    }

    // MARK: Reading errors

    final class Loose: ModelTestRecord {
        @Column var name = ""
        @Column var small: Int8 = 0
        @Column var count = 0
        @Column var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        @JSONColumn var tags: [String] = []
        @Column var flag = false
        @Column var unsigned: UInt8 = 0
    }

    static let badValues: [(column: String, sql: String, found: String)] = [
        ("name", "NULL", "NULL"),
        ("small", "300", "INTEGER 300"),
        ("count", "'abc'", "TEXT 'abc'"),
        ("count", "3.7", "REAL 3.7"),
        ("uuid", "'not-a-uuid'", "TEXT 'not-a-uuid'"),
        ("tags", "'{not json'", "TEXT '{not json'"),
        ("tags", "'{\"a\":1}'", "TEXT '{\"a\":1}'"),
        ("flag", "2", "INTEGER 2"),
        ("unsigned", "-1", "INTEGER -1"),
        ("count", "x'00'", "BLOB (1 bytes)"),
    ]

    @Test(arguments: badValues)
    func readingAValueThatDoesNotFitThrowsTypeMismatchNamingTableColumnRow(
        column: String, sql: String, found: String
    ) throws {
        try withModelDB { db in
            // A table another program wrote, without NOT NULL or types.
            try db.execute("CREATE TABLE loose (id INTEGER PRIMARY KEY, name, small, count, uuid, tags, flag, unsigned)")
            try db.execute("""
                INSERT INTO loose (id, name, small, count, uuid, tags, flag, unsigned)
                VALUES (1, 'ok', 1, 1, 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f', '[]', 0, 0)
                """)
            try db.execute("""
                INSERT INTO loose (id, name, small, count, uuid, tags, flag, unsigned)
                VALUES (7, 'ok', 1, 1, 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f', '[]', 0, 0)
                """)
            try db.execute("UPDATE loose SET \"\(column)\" = \(sql) WHERE id = 7")
            #expect(try Loose.find(id: 1)?.name == "ok", "the good row reads")

            for (label, read) in [
                ("find(id:)", { _ = try Loose.find(id: 7) }),
                ("findAll", { _ = try Loose.findAll() }),
                ("where", { _ = try Loose.where(["id": 7]).all() }),
                ("fetch", { _ = try Loose.fetch(sql: "SELECT * FROM loose") }),
            ] as [(String, () throws -> Void)] {
                let error = expectActiveObjectError(read)
                let fields = try #require(error?.typeMismatchFields, "\(label): \(String(describing: error))")
                #expect(fields.table == "loose", "\(label)")
                #expect(fields.column == column, "\(label)")
                #expect(fields.rowID == 7, "\(label)")
                #expect(fields.found == found, "\(label)")
                #expect(!fields.expected.isEmpty)
                let text = "\(try #require(error))"
                #expect(text.contains("loose.\(column)") && text.contains("7"), "\(text)")
            }
        }
    }

    @Test func pluckOfAMismatchedValueThrowsTypeMismatchWithRowID() throws {
        try withModelDB { db in
            try db.execute("CREATE TABLE loose (id INTEGER PRIMARY KEY, name, small, count, uuid, tags, flag, unsigned)")
            try db.execute("INSERT INTO loose (id, small) VALUES (3, 300)")
            let error = expectActiveObjectError { _ = try Loose.all.pluck(\.$small) }
            let fields = try #require(error?.typeMismatchFields)
            #expect(fields.table == "loose" && fields.column == "small" && fields.rowID == 3)
        }
    }

    @Test func findIDsIsOneQueryInTheGivenOrder() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            try PolishPerson.seed()
            let (found, sql) = try recorder.recording { try PolishPerson.find(ids: [3, 1, 99, 2, 3]) }
            #expect(found.map(\.name) == ["Bob", "Cid", "Ann"])
            #expect(sql.count == 1)
            #expect(try PolishPerson.find(ids: []).isEmpty)
        }
    }
}
