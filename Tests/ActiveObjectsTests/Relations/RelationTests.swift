import Foundation
import Testing
@testable import ActiveObjects

// The ormapper example: a Group has many Person, a Person belongs to a Group.
// The child is declared before its parent here.
final class RelPerson: SchemaTestModel {
    @Column var name: String = ""
    @Column var age: Int = 0
    @Column(references: RelGroup.self, onDelete: .setNull) var groupId: Int64? = nil
    var group: BelongsTo<RelGroup> { belongsTo(\.$groupId) }

    override func validate() throws {
        if name.isEmpty { throw ValidationError("name", "must not be empty") }
    }
}

final class RelGroup: SchemaTestModel {
    @Column var name: String = ""
    var people: HasMany<RelPerson> { hasMany(\.$groupId) }
}

// has_one.
final class RelUser: SchemaTestModel {
    @Column var login: String = ""
    var profile: HasOne<RelProfile> { hasOne(\.$userId) }
}

final class RelProfile: SchemaTestModel {
    @Column var bio: String = ""
    @Column(references: RelUser.self, onDelete: .cascade) var userId: Int64? = nil
    var user: BelongsTo<RelUser> { belongsTo(\.$userId) }
}

// Parent declared first, child's schema used first (see eitherOrder… tests).
final class RelAuthorA: SchemaTestModel {
    @Column var name: String = ""
    var books: HasMany<RelBookA> { hasMany(\.$authorId) }
}
final class RelBookA: SchemaTestModel {
    @Column var title: String = ""
    @Column(references: RelAuthorA.self, onDelete: .cascade) var authorId: Int64? = nil
    var author: BelongsTo<RelAuthorA> { belongsTo(\.$authorId) }
}

// Child declared first, parent's schema used first.
final class RelBookB: SchemaTestModel {
    @Column var title: String = ""
    @Column(references: RelAuthorB.self, onDelete: .cascade) var authorId: Int64? = nil
    var author: BelongsTo<RelAuthorB> { belongsTo(\.$authorId) }
}
final class RelAuthorB: SchemaTestModel {
    @Column var name: String = ""
    var books: HasMany<RelBookB> { hasMany(\.$authorId) }
    var firstBook: HasOne<RelBookB> { hasOne(\.$authorId) }
}

// A non-optional foreign key.
final class RelOrder: SchemaTestModel {
    @Column var number: String = ""
    var lines: HasMany<RelOrderLine> { hasMany(\.$orderId) }
    var mainLine: HasOne<RelOrderLine> { hasOne(\.$orderId) }
}
final class RelOrderLine: SchemaTestModel {
    @Column(references: RelOrder.self, onDelete: .cascade) var orderId: Int64 = 0
    @Column var product: String = ""
    var order: BelongsTo<RelOrder> { belongsTo(\.$orderId) }
}

/// belongs_to, has_many and has_one through the public API.
@Suite struct RelationTests {
    /// Two groups (Crew: Ann 25, Bob 35, Cid 45; Band: Dee 50), and Eve without a group.
    struct World {
        let crew: RelGroup, band: RelGroup
        let people: [String: RelPerson]
    }

    static func makeWorld(_ fx: SchemaFixture) throws -> World {
        try fx.run {
            try RelGroup.createTable()
            try RelPerson.createTable()
            let crew = RelGroup(); crew.name = "Crew"; try crew.save()
            let band = RelGroup(); band.name = "Band"; try band.save()
            var people: [String: RelPerson] = [:]
            for (name, age, group) in [("Ann", 25, crew), ("Bob", 35, crew), ("Cid", 45, crew), ("Dee", 50, band), ("Eve", 60, nil)] as [(String, Int, RelGroup?)] {
                let person = RelPerson(); person.name = name; person.age = age; person.groupId = group?.id
                try person.save()
                people[name] = person
            }
            return World(crew: crew, band: band, people: people)
        }
    }

    @Test func hasManyAllCountAndWhere() throws {
        let fx = try SchemaFixture()
        let world = try Self.makeWorld(fx)
        try fx.run { () throws in
            #expect(try world.crew.people.all().map(\.name) == ["Ann", "Bob", "Cid"])
            #expect(try world.crew.people.count() == 3)
            #expect(try world.band.people.all().map(\.name) == ["Dee"])
            #expect(try world.crew.people.where(\.$age > 30).all().map(\.name) == ["Bob", "Cid"])
            #expect(try world.crew.people.where(\.$age > 30).count() == 2)
            #expect(try world.crew.people.where(["age": 25]).all().map(\.name) == ["Ann"])
            #expect(try world.crew.people.where("age < ?", 40).count() == 2)
            #expect(try world.crew.people.where(\.$name, .like("C%")).all().map(\.name) == ["Cid"])
            // A Query: every query feature applies, and the relation's filter always holds.
            #expect(try world.crew.people.query.order(by: \.$age, .descending).limit(2).pluck(\.$name) == ["Cid", "Bob"])
            #expect(try world.crew.people.where(\.$age > 40 || \.$name == "Dee").all().map(\.name) == ["Cid"])
            #expect(try world.crew.people.query.exists())
        }
    }

    @Test func belongsToGet() throws {
        let fx = try SchemaFixture()
        let world = try Self.makeWorld(fx)
        try fx.run {
            let ann = try #require(try RelPerson.findFirst(where: ["name": "Ann"]))
            let group = try #require(try ann.group.get())
            #expect(group.name == "Crew")
            #expect(group.id == world.crew.id)
            #expect(try world.people["Dee"]?.group.get()?.name == "Band")
        }
        // A NULL key: nil, without SQL.
        let eve = try #require(world.people["Eve"])
        let statements = try fx.statements { () throws in #expect(try eve.group.get() == nil) }
        #expect(statements.isEmpty, "\(statements)")
    }

    @Test func belongsToAMissingRowIsNil() throws {
        let fx = try SchemaFixture(foreignKeys: false)
        let world = try Self.makeWorld(fx)
        try fx.db.execute("DELETE FROM rel_group WHERE name = 'Band'")   // no cascade: enforcement off
        try fx.run {
            let deeID = try #require(world.people["Dee"]?.id)
            let dee = try #require(try RelPerson.find(id: deeID))
            #expect(dee.groupId == world.band.id)
            #expect(try dee.group.get() == nil)
        }
    }

    @Test func belongsToSet() throws {
        let fx = try SchemaFixture()
        let world = try Self.makeWorld(fx)
        try fx.run {
            let eve = try #require(world.people["Eve"])
            try eve.group.set(world.band)
            #expect(eve.groupId == world.band.id)
            try eve.save()
            #expect(try world.band.people.all().map(\.name) == ["Dee", "Eve"])
            try eve.group.set(nil)
            #expect(eve.groupId == nil)
            let unsaved = RelGroup()
            expectActiveObjectError({ try eve.group.set(unsaved) }, matches: \.isRecordNotFound)
            #expect(eve.groupId == nil)
        }
    }

    @Test func addSetsTheKeyAndSaves() throws {
        let fx = try SchemaFixture()
        let world = try Self.makeWorld(fx)
        try fx.run {
            // A new child is inserted with the key.
            let fay = RelPerson(); fay.name = "Fay"; fay.age = 33
            try world.band.people.add(fay)
            #expect(fay.id != nil)
            #expect(fay.groupId == world.band.id)
            #expect(!fay.hasChanges)
            // An existing child moves to the group.
            let ann = try #require(world.people["Ann"])
            try world.band.people.add(ann)
            #expect(ann.groupId == world.band.id)
        }
        #expect(try fx.db.rows("SELECT name FROM rel_person WHERE groupId = ? ORDER BY id", [world.band.id]).map { try $0["name"] as String }
                == ["Ann", "Dee", "Fay"])
        try fx.run { () throws in #expect(try world.crew.people.count() == 2) }
    }

    @Test func addToANewParentSavesTheParentFirstInOneTransaction() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RelGroup.createTable()
            try RelPerson.createTable()
        }
        let group = RelGroup(); group.name = "New"
        let ann = RelPerson(); ann.name = "Ann"
        let statements = try fx.statements { try group.people.add(ann) }
        #expect(group.id != nil)
        #expect(ann.groupId == group.id)
        let writes = statements.filter { !$0.hasPrefix("SELECT") && !$0.hasPrefix("PRAGMA") }
        #expect(writes.count == 4, "\(writes)")
        #expect(writes.first?.hasPrefix("BEGIN") == true, "\(writes)")
        #expect(writes.dropFirst().first?.contains("\"rel_group\"") == true, "\(writes)")
        #expect(writes.dropFirst(2).first?.contains("\"rel_person\"") == true, "\(writes)")
        #expect(writes.last == "COMMIT", "\(writes)")
        try fx.run { () throws in #expect(try group.people.all().map(\.name) == ["Ann"]) }
    }

    @Test func aFailedAddToANewParentWritesNothingAndLeavesTheParentNew() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RelGroup.createTable()
            try RelPerson.createTable()
        }
        let group = RelGroup(); group.name = "New"
        let nameless = RelPerson()   // fails validation
        try fx.run {
            expectActiveObjectError({ try group.people.add(nameless) }) { error in
                if case .validationFailed = error { true } else { false }
            }
        }
        #expect(try count(fx.db, "SELECT count(*) FROM rel_group") == 0)
        #expect(try count(fx.db, "SELECT count(*) FROM rel_person") == 0)
        // Nothing was written, so the objects are as new as before: a retry works.
        #expect(group.id == nil)
        #expect(nameless.id == nil)
        #expect(nameless.groupId == nil)
        nameless.name = "Now named"
        try fx.run { try group.people.add(nameless) }
        #expect(try count(fx.db, "SELECT count(*) FROM rel_group") == 1)
        #expect(try count(fx.db, "SELECT count(*) FROM rel_person WHERE groupId = ?", [try #require(group.id)]) == 1)
    }

    @Test func aNewParentHasNoChildrenAndRunsNoSQL() throws {
        let fx = try SchemaFixture()
        _ = try Self.makeWorld(fx)
        let group = RelGroup()
        let user = RelUser()
        let statements = try fx.statements { () throws in
            #expect(try group.people.all().isEmpty)
            #expect(try group.people.count() == 0)
            #expect(try user.profile.get() == nil)
        }
        #expect(statements.isEmpty, "\(statements)")
        // As a query it matches nothing, even though people with a NULL key exist.
        try fx.run { () throws in
            #expect(try group.people.query.all().isEmpty)
            #expect(try group.people.where(\.$age > 0).count() == 0)
        }
    }

    @Test func hasOne() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RelUser.createTable()
            try RelProfile.createTable()
            let joe = RelUser(); joe.login = "joe"; try joe.save()
            let ann = RelUser(); ann.login = "ann"; try ann.save()
            #expect(try joe.profile.get() == nil)
            let profile = RelProfile(); profile.bio = "hi"; profile.userId = joe.id
            try profile.save()
            let fetched = try #require(try joe.profile.get())
            #expect(fetched.id == profile.id)
            #expect(fetched.bio == "hi")
            #expect(try fetched.user.get()?.login == "joe")
            #expect(try ann.profile.get() == nil)
            // Two rows pointing at one parent: the lowest primary key is "the" one.
            let second = RelProfile(); second.bio = "second"; second.userId = joe.id
            try second.save()
            #expect(try joe.profile.get()?.bio == "hi")
            // Cascade: deleting the user deletes its profiles.
            try joe.delete()
            #expect(try RelProfile.countAll() == 0)
        }
    }

    @Test func nonOptionalForeignKeys() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RelOrder.createTable()
            try RelOrderLine.createTable()
            let order = RelOrder(); order.number = "A-1"; try order.save()
            for product in ["pen", "ink"] {
                let line = RelOrderLine(); line.product = product
                try order.lines.add(line)
            }
            #expect(try order.lines.all().map(\.product) == ["pen", "ink"])
            #expect(try order.mainLine.get()?.product == "pen")
            let line = try #require(try RelOrderLine.findFirst(where: ["product": "ink"]))
            #expect(try line.order.get()?.number == "A-1")
            // Key 0 refers to no order: refused by the foreign key.
            let orphan = RelOrderLine(); orphan.product = "lost"
            expectDatabaseError(.constraint) { try orphan.save() }
        }
    }

    @Test func childClassUsedBeforeItsParentClass() throws {
        let fx = try SchemaFixture()
        try fx.run {
            // The child's schema is built first (its REFERENCES names the parent's table).
            let orphan = RelBookA(); orphan.title = "draft"
            #expect(try orphan.author.get() == nil)
            try RelAuthorA.createTable()
            try RelBookA.createTable()
            let author = RelAuthorA(); author.name = "Le Guin"; try author.save()
            let book = RelBookA(); book.title = "The Dispossessed"
            try author.books.add(book)
            #expect(try book.author.get()?.name == "Le Guin")
            #expect(try author.books.all().map(\.title) == ["The Dispossessed"])
            #expect(try RelBookA.including(\.author).all().first?.author.get()?.name == "Le Guin")
        }
        #expect(try foreignKeyList(fx.db, "rel_book_a").map(\.table) == ["rel_author_a"])
    }

    @Test func parentClassUsedBeforeItsChildClass() throws {
        let fx = try SchemaFixture()
        try fx.run {
            let author = RelAuthorB(); author.name = "Lem"
            #expect(try author.books.all().isEmpty)
            try RelAuthorB.createTable()
            try RelBookB.createTable()
            try author.save()
            let book = RelBookB(); book.title = "Solaris"
            try author.books.add(book)
            #expect(try author.books.count() == 1)
            #expect(try author.firstBook.get()?.title == "Solaris")
            #expect(try book.author.get()?.name == "Lem")
            #expect(try RelAuthorB.including(\.books).all().first?.books.all().map(\.title) == ["Solaris"])
        }
        #expect(try foreignKeyList(fx.db, "rel_book_b").map(\.table) == ["rel_author_b"])
    }
}
