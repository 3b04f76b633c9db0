import Foundation
import Testing
import ActiveObjects   // deliberately not @testable: only the public contract (shared/API.md)

/// The examples of API.md, written the way a new user writes them, against the public API only.
enum Contract {
    enum Mood: String { case happy, sad }

    final class Group: ActiveObject {
        @Column var name = ""
        var people: HasMany<Person> { hasMany(\.$groupId) }
    }

    final class Person: ActiveObject {
        @Column var name: String = ""
        @Column var age: Int = 0
        @Column var income: Double = 0
        @Column var active: Bool = true
        @Column var rating: Double? = nil
        @Column var birthdate: Date? = nil
        @Column("photo_data") var photo: Data? = nil
        @Column var mood: Mood = .happy
        @JSONColumn var tags: [String] = []
        @Column(references: Group.self, onDelete: .cascade) var groupId: Int64? = nil
        var scratch = 0
        var group: BelongsTo<Group> { belongsTo(\.$groupId) }

        override func validate() throws {
            if name.isEmpty { throw ValidationError("name", "must not be empty") }
        }
    }
}

extension Contract.Mood: ColumnValue {}

/// Uses `ActiveObject.defaultDatabase`, so it is the only suite that sets it.
@Suite(.serialized)
struct APIContractTests {
    @Test func theReadmeTourCompilesAndBehaves() throws {
        typealias Person = Contract.Person
        typealias Group = Contract.Group
        let db = try Database.inMemory()
        ActiveObject.defaultDatabase = db
        defer { ActiveObject.defaultDatabase = nil }

        var migrator = Migrator()
        migrator.register("001-create") { db in try Group.createTable(in: db); try Person.createTable(in: db) }
        try migrator.migrate(db)
        #expect(try migrator.appliedMigrations(db) == ["001-create"])

        let p = Person(); p.name = "Joe"; p.age = 30
        try p.save()
        let id = try #require(p.id)
        p.age = 31
        #expect(p.hasChanges && p.changedColumns == ["age"])
        try p.save()
        #expect(try Person.find(id: id)?.age == 31)
        #expect(String(describing: p).hasPrefix("Person(id: \(id), name: \"Joe\", age: 31"))

        let ann = Person(); ann.name = "Ann"; ann.age = 25; ann.rating = 4.5
        try ann.insert()
        let thirty: [Person] = try Person.find(where: ["age": [30, 31], "rating": nil])
        #expect(thirty.map(\.name) == ["Joe"])
        #expect(try Person.findFirst(where: ["name": "Ann"])?.rating == 4.5)
        #expect(try Person.countAll() == 2)
        #expect(try Person.count(where: ["active": true]) == 2)
        let raw: [Person] = try Person.fetch(sql: "SELECT * FROM person WHERE age > ?", [26])
        #expect(raw.map(\.name) == ["Joe"])

        let q = Person.where(["active": true]).where("age >= ?", 18).where(\.$name, .like("%o%"))
            .order(by: \.$age, .descending).order(by: "name").limit(20).offset(0)
        #expect(try q.all().map(\.name) == ["Joe"])
        #expect(try q.count() == 1 && q.exists())
        #expect(try Person.all.page(1, size: 1).count == 1)
        let names: [String] = try Person.all.order(by: \.$name).pluck(\.$name)
        #expect(names == ["Ann", "Joe"])
        #expect(try Person.where(\.$age > 30 && \.$name == "Joe").all().count == 1)
        var seen = 0
        try Person.all.each { _ in seen += 1 }
        let cursor = try Person.all.cursor()
        while try cursor.next() != nil { seen += 1 }
        #expect(seen == 4)

        let group = Group(); group.name = "Crew"
        try group.save()
        try group.people.add(ann)
        #expect(try group.people.count() == 1)
        #expect(try ann.group.get()?.name == "Crew")
        #expect(try Person.where(["active": true]).including(\.group).all().count == 2)

        let nameless = Person()
        #expect(throws: ActiveObjectError.self) { try nameless.save() }
        #expect(nameless.id == nil)

        let rows: [Row] = try db.rows("SELECT name, age FROM person WHERE age > ?", [30])
        let name: String = try rows[0]["name"]
        let age: Int = try rows[0][1]
        #expect(name == "Joe" && age == 31)
        let n: Int? = try db.scalar("SELECT count(*) FROM person")
        #expect(n == 2)
        try db.transaction { try p.save(); try ann.save() }

        let gone: Bool = try p.delete()
        #expect(gone)
        #expect(try Person.delete(where: ["active": false]) == 0)
        #expect(try Person.deleteAll() == 1)
        try db.close()
    }
}
