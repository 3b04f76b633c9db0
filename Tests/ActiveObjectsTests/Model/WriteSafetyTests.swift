import Foundation
import Testing
@testable import ActiveObjects

final class SafetyPerson: ModelTestRecord {
    @Column var name = ""
    @Column var age = 0
}

/// A natural UUID key whose default is a fresh UUID per object.
final class SafetyToken: ModelTestRecord {
    override class var primaryKey: String { "token" }
    @Column var token: UUID = UUID()
    @Column var owner = ""
}

/// Writes that would overwrite or duplicate rows are refused, never run: objects loaded without
/// their key or without some columns, deleted objects whose id another row took, raw SQL that
/// would end a transaction behind its back.
@Suite struct WriteSafetyTests {
    private static func seedTwo() throws {
        try SafetyPerson.createTable()
        for (name, age) in [("Ann", 30), ("Bob", 40)] {
            let person = SafetyPerson()
            person.name = name
            person.age = age
            try person.save()
        }
    }

    private static func rows() throws -> [String] {
        try SafetyPerson.findAll().map { "\($0.id ?? 0):\($0.name):\($0.age)" }
    }

    @Test func upsertOfAnObjectLoadedWithoutItsKeyIsRefused() throws {
        try withModelDB { _ in
            try Self.seedTwo()
            let keyless = try #require(try SafetyPerson.fetch(sql: "SELECT name, age FROM safety_person").first)
            #expect(throws: ActiveObjectError.self) { try keyless.upsert() }
            #expect(try Self.rows() == ["1:Ann:30", "2:Bob:40"], "no duplicate row")
            // insert() still adds it as a new row, on purpose.
            try keyless.insert()
            #expect(try SafetyPerson.countAll() == 3)
        }
    }

    @Test func aPartlyLoadedObjectSavesItsChangesButNeverItsWholeRow() throws {
        try withModelDB { _ in
            try Self.seedTwo()
            let partial = try #require(try SafetyPerson.fetch(sql: "SELECT id, name FROM safety_person WHERE id = 1").first)
            #expect(partial.isPartiallyLoaded && partial.age == 0)
            // The columns it changed: fine (an UPDATE of name only).
            partial.name = "Anna"
            try partial.save()
            #expect(try Self.rows() == ["1:Anna:30", "2:Bob:40"])
            // Every write of the whole row would store the default age over a real one.
            func refused(_ write: () throws -> Void) {
                do {
                    try write()
                    Issue.record("a whole-row write of a partly loaded object ran")
                } catch ActiveObjectError.misuse(let message) {
                    #expect(message.contains("without some of its columns"), "\(message)")
                } catch {
                    Issue.record("unexpected \(error)")
                }
            }
            refused { try partial.upsert() }
            refused { try partial.insert() }
            partial.id = 2
            refused { try partial.save() }
            refused { try partial.update() }
            partial.id = 1
            try partial.delete()
            refused { try partial.save() }
            #expect(try Self.rows() == ["2:Bob:40"], "Bob keeps his age; the deleted row stays deleted")
            #expect(throws: ActiveObjectError.self) { try SafetyPerson.insertAll([partial]) }
            // A reload makes it whole again; then it can put its row back.
            let whole = try #require(try SafetyPerson.fetch(sql: "SELECT id, name FROM safety_person").first)
            try whole.reload()
            #expect(!whole.isPartiallyLoaded && whole.age == 40)
            whole.id = 5
            try whole.save()
            #expect(try Self.rows() == ["2:Bob:40", "5:Bob:40"])
        }
    }

    @Test func aDeletedObjectWhoseIDWasReusedFailsRatherThanOverwrite() throws {
        try withModelDB { _ in
            try SafetyPerson.createTable()
            let ann = SafetyPerson()
            ann.name = "Ann"
            try ann.save()
            try ann.delete()
            let bob = SafetyPerson()
            bob.name = "Bob"
            try bob.save()
            #expect(bob.id == ann.id, "SQLite reuses the largest rowid")
            #expect(throws: DatabaseError.self) { try ann.save() }
            #expect(try Self.rows() == ["1:Bob:0"], "Bob's row is untouched")
            #expect(ann.recordState == .deleted && ann.id == 1, "the object is as it was: a retry can decide")
            // With its id free again, the deleted object puts its row back.
            try bob.delete()
            try ann.save()
            #expect(try Self.rows() == ["1:Ann:0"])
        }
    }

    @Test func aDeletedNaturalKeyObjectIsInsertedAgainAndNeverOverwrites() throws {
        try withModelDB { _ in
            try SafetyToken.createTable()
            let first = SafetyToken()
            first.owner = "first"
            try first.save()
            try first.delete()
            let second = SafetyToken()
            second.token = first.token
            second.owner = "second"
            try second.save()
            #expect(throws: DatabaseError.self) { try first.save() }
            #expect(try SafetyToken.find(key: first.token)?.owner == "second")
        }
    }

    @Test func releasingASavepointOpenedOutsideTheTransactionIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ao-release-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try Database(path: directory.appendingPathComponent("db.sqlite").path)
        defer { try? database.close() }
        try ModelTestDB.$current.withValue(database) {
            try SafetyPerson.createTable()
            try database.execute("SAVEPOINT outer_work")
            let person = SafetyPerson()
            person.name = "Ann"
            do {
                try database.transaction {
                    try person.save()
                    try database.execute("RELEASE outer_work")
                }
                Issue.record("a RELEASE of an enclosing savepoint ran inside transaction")
            } catch ActiveObjectError.misuse(let message) {
                #expect(message.contains("RELEASE outer_work"), "\(message)")
            }
            // The transaction rolled back as a whole: the object is new again, and nothing
            // was committed behind its back.
            #expect(person.id == nil)
            try database.execute("RELEASE outer_work")
            #expect(try SafetyPerson.countAll() == 0)
            // The body's own savepoints stay usable.
            try database.transaction {
                try database.execute("SAVEPOINT mine")
                try person.save()
                try database.execute("ROLLBACK TO mine")
                try database.execute("SAVEPOINT inner")
                try database.execute("RELEASE mine")
            }
            #expect(try SafetyPerson.countAll() == 0, "rolled back to the body's own savepoint")
        }
    }
}
