import Foundation
import Testing
@testable import ActiveObjects

enum SMLevel: String { case low, high }
extension SMLevel: ColumnValue {}

/// The first release of the model.
final class SMContactV1: SchemaTestModel {
    override class var tableName: String { "sm_contact" }
    @Column var name: String = ""
    @Column var age: Int = 0
}

/// The next release: new columns of every kind, an index and a unique column.
final class SMContactV2: SchemaTestModel {
    override class var tableName: String { "sm_contact" }
    @Column var name: String = ""
    @Column var age: Int = 0
    @Column var nickname: String = "n/a"
    @Column var score: Double = 1.5
    @Column var balance: Int = -5
    @Column var active: Bool = true
    @Column var level: SMLevel = .high
    @Column var avatar: Data = Data([1, 2, 3])
    @Column var joined: Date = Date(timeIntervalSince1970: 86_400)
    @Column var rating: Double? = nil
    @Column(indexed: true) var city: String = "Bern"
    @Column(unique: true) var email: String? = nil
    @Column(unique: true, indexed: true) var badge: Int? = nil
}

/// Adds a non-optional unique column: impossible on a table with two rows (same default).
final class SMContactV3: SchemaTestModel {
    override class var tableName: String { "sm_contact" }
    @Column var name: String = ""
    @Column var age: Int = 0
    @Column(unique: true) var handle: String = ""
}

final class SMSnakeThing: SchemaTestModel {
    override class var columnNaming: ColumnNaming { .snakeCase }
    @Column var lastPlayedDate: Date? = nil
    @Column var playCount: Int = 0
    @Column("EXPLICIT") var explicitName: String = ""
}

/// `createTable()` / `migrate()`: create missing tables, add missing columns, indexes; idempotent.
@Suite struct SchemaMigrationTests {
    @Test func createTableCreatesTheModelsShape() throws {
        let fx = try SchemaFixture()
        try fx.run { try SMContactV2.createTable() }
        let info = try tableInfo(fx.db, "sm_contact")
        #expect(info.map(\.description) == [
            "id INTEGER PK",
            "name TEXT NOT NULL DEFAULT ''",
            "age INTEGER NOT NULL DEFAULT 0",
            "nickname TEXT NOT NULL DEFAULT 'n/a'",
            "score REAL NOT NULL DEFAULT 1.5",
            "balance INTEGER NOT NULL DEFAULT -5",
            "active INTEGER NOT NULL DEFAULT 1",
            "level TEXT NOT NULL DEFAULT 'high'",
            "avatar BLOB NOT NULL DEFAULT X'010203'",
            "joined TEXT NOT NULL DEFAULT '1970-01-02 00:00:00.000'",
            "rating REAL DEFAULT NULL",
            "city TEXT NOT NULL DEFAULT 'Bern'",
            "email TEXT DEFAULT NULL",
            "badge INTEGER DEFAULT NULL",
        ])
        let indexes = try indexList(fx.db, "sm_contact")
        #expect(Set(indexes.map { "\($0.unique ? "unique" : "plain")(\($0.columns.joined()))" })
                == ["plain(city)", "unique(email)", "unique(badge)", "plain(badge)"])
    }

    @Test func columnNamingIsUsedForTheDDL() throws {
        let fx = try SchemaFixture()
        try fx.run { try SMSnakeThing.migrate() }
        #expect(try columnNames(fx.db, "sm_snake_thing") == ["id", "last_played_date", "play_count", "EXPLICIT"])
    }

    @Test func newColumnsAreAddedToAPopulatedTableWithTheSwiftDefaults() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SMContactV1.createTable()
            for (name, age) in [("Ann", 31), ("Bob", 42)] {
                let contact = SMContactV1(); contact.name = name; contact.age = age
                try contact.save()
            }
        }
        fx.trace.removeAll()
        try fx.run { try SMContactV2.createTable() }
        let alters = fx.trace.statements.filter { $0.hasPrefix("ALTER TABLE") }
        #expect(alters.count == 11, "\(alters)")
        #expect(try columnNames(fx.db, "sm_contact") == [
            "id", "name", "age", "nickname", "score", "balance", "active", "level", "avatar", "joined",
            "rating", "city", "email", "badge",
        ])
        for column in try tableInfo(fx.db, "sm_contact") where !["id", "rating", "email", "badge"].contains(column.name) {
            #expect(column.notNull, "\(column)")
            #expect(column.defaultValue != nil, "\(column)")
        }

        // The old rows read the Swift defaults.
        try fx.run {
            let contacts = try SMContactV2.findAll()
            #expect(contacts.map(\.name) == ["Ann", "Bob"])
            #expect(contacts.map(\.age) == [31, 42])
            #expect(contacts.map(\.id) == [1, 2])
            for contact in contacts {
                #expect(contact.nickname == "n/a")
                #expect(contact.score == 1.5)
                #expect(contact.balance == -5)
                #expect(contact.active == true)
                #expect(contact.level == .high)
                #expect(contact.avatar == Data([1, 2, 3]))
                #expect(contact.joined == Date(timeIntervalSince1970: 86_400))
                #expect(contact.rating == nil)
                #expect(contact.city == "Bern")
                #expect(contact.email == nil)
                #expect(contact.badge == nil)
                #expect(!contact.hasChanges)
            }
        }
        // Stored as such, not only defaulted in Swift.
        #expect(try fx.db.scalar("SELECT count(*) FROM sm_contact WHERE nickname = 'n/a' AND score = 1.5 AND balance = -5 AND active = 1 AND level = 'high' AND avatar = X'010203' AND city = 'Bern' AND rating IS NULL") == 2)

        // Indexes and unique indexes were created too.
        let indexes = try indexList(fx.db, "sm_contact")
        #expect(indexes.contains { $0.columns == ["city"] && !$0.unique })
        #expect(indexes.contains { $0.columns == ["email"] && $0.unique })
        #expect(indexes.contains { $0.columns == ["badge"] && $0.unique })

        // The unique index is enforced.
        try fx.run {
            let a = try #require(try SMContactV2.find(id: 1))
            a.email = "same@example.com"
            try a.save()
            let b = try #require(try SMContactV2.find(id: 2))
            b.email = "same@example.com"
            expectDatabaseError(.constraint) { try b.save() }
        }
    }

    @Test func theOldModelStillWorksAfterColumnsWereAdded() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SMContactV2.createTable()
            // The old release writes rows without knowing the new columns: they get the defaults.
            let old = SMContactV1(); old.name = "Old"; old.age = 70
            try old.save()
            let oldID = try #require(old.id)
            let seen = try #require(try SMContactV2.find(id: oldID))
            #expect(seen.nickname == "n/a")
            #expect(seen.city == "Bern")
            // The old model's migrate leaves the newer columns alone.
            try SMContactV1.migrate()
        }
        #expect(try columnNames(fx.db, "sm_contact").count == 14)
    }

    @Test func createTableIsIdempotent() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SMContactV1.createTable()
            let contact = SMContactV1(); contact.name = "Ann"
            try contact.save()
            try SMContactV2.createTable()
        }
        let info = try tableInfo(fx.db, "sm_contact")
        let indexes = try indexList(fx.db, "sm_contact")
        let master = try masterSQL(fx.db, "sm_contact")
        let rows = try rawRows(fx.db, "sm_contact")

        for _ in 0..<2 {
            let statements = try fx.statements { try SMContactV2.createTable() }
            #expect(!statements.contains { $0.uppercased().hasPrefix("ALTER") }, "\(statements)")
            #expect(!statements.contains { $0.uppercased().hasPrefix("CREATE TABLE") }, "\(statements)")
            #expect(try tableInfo(fx.db, "sm_contact") == info)
            #expect(try indexList(fx.db, "sm_contact") == indexes)
            #expect(try masterSQL(fx.db, "sm_contact") == master)
            #expect(try rawRows(fx.db, "sm_contact") == rows)
        }
        // migrate() is the same thing.
        let statements = try fx.statements { try SMContactV2.migrate() }
        #expect(!statements.contains { $0.uppercased().hasPrefix("ALTER") }, "\(statements)")
        #expect(try masterSQL(fx.db, "sm_contact") == master)
    }

    @Test func createTableInAMigrationStep() throws {
        let fx = try SchemaFixture()
        var migrator = Migrator()
        migrator.register("001-contacts") { db in try SMContactV1.createTable(in: db) }
        migrator.register("002-seed") { db in
            try db.execute("INSERT INTO sm_contact (name, age) VALUES ('Ann', 31)")
        }
        migrator.register("003-contacts-v2") { db in try SMContactV2.migrate(in: db) }
        try fx.run { try migrator.migrate(fx.db) }
        #expect(try migrator.appliedMigrations(fx.db) == ["001-contacts", "002-seed", "003-contacts-v2"])
        #expect(try columnNames(fx.db, "sm_contact").count == 14)
        try fx.run { () throws in #expect(try SMContactV2.find(id: 1)?.nickname == "n/a") }
    }

    @Test func createTableInAnotherDatabaseThanTheModels() throws {
        let fx = try SchemaFixture()
        let other = try Database.inMemory()
        try fx.run { try SMContactV2.createTable(in: other) }
        #expect(try tableExists(other, "sm_contact"))
        #expect(try !tableExists(fx.db, "sm_contact"))
    }

    @Test func aFailingAddColumnChangesNothing() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SMContactV1.createTable()
            for name in ["Ann", "Bob"] {
                let contact = SMContactV1(); contact.name = name
                try contact.save()
            }
        }
        let before = try masterSQL(fx.db, "sm_contact")
        // Two rows would both get the default "" in a unique column.
        try fx.run { expectDatabaseError(.constraint) { try SMContactV3.createTable() } }
        #expect(try masterSQL(fx.db, "sm_contact") == before)
        #expect(try columnNames(fx.db, "sm_contact") == ["id", "name", "age"])
        #expect(!fx.db.isInTransaction)
    }

    @Test func withoutADatabaseCreateTableThrowsNoDatabase() throws {
        // Not inside `fx.run`: the model has no database.
        expectActiveObjectError({ try SMContactV1.createTable() }) { error in
            if case .noDatabase = error { true } else { false }
        }
    }
}

final class SMFKGroup: SchemaTestModel {
    override class var tableName: String { "sm_fk_group" }
    @Column var name: String = ""
}

final class SMFKMemberV1: SchemaTestModel {
    override class var tableName: String { "sm_fk_member" }
    @Column var name: String = ""
}

/// The next release adds a non-optional foreign key, defaulting to group 1.
final class SMFKMemberV2: SchemaTestModel {
    override class var tableName: String { "sm_fk_member" }
    @Column var name: String = ""
    @Column(references: SMFKGroup.self) var groupId: Int64 = 1
}

/// A non-optional foreign-key column added to a populated table: SQLite's `ALTER TABLE`
/// refuses it while foreign keys are enforced. `createTable()` says so, naming the column and
/// the remedies, and changes nothing; the rebuild adds it, checking the existing rows.
@Suite struct ForeignKeyColumnAdditionTests {
    @Test func addingANonOptionalForeignKeyToExistingRowsIsAClearErrorAndTheRebuildAddsIt() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SMFKGroup.createTable()
            try SMFKMemberV1.createTable()
            let ann = SMFKMemberV1()
            ann.name = "Ann"
            try ann.save()
            do {
                try SMFKMemberV2.createTable()
                Issue.record("the column was added")
            } catch let ActiveObjectError.invalidModel(model, reason) {
                #expect(model == "SMFKMemberV2")
                #expect(reason.contains("\"groupId\"") && reason.contains("optional")
                        && reason.contains("migrate(rebuildingTable: true)"), "\(reason)")
            }
            #expect(try tableInfo(fx.db, "sm_fk_member").map(\.name) == ["id", "name"])

            // The rebuild gives the existing row the default, which must name a group.
            let refused = #expect(throws: DatabaseError.self) { try SMFKMemberV2.migrate(rebuildingTable: true) }
            #expect(refused?.resultCode == .constraint)
            #expect(try tableInfo(fx.db, "sm_fk_member").map(\.name) == ["id", "name"])
            let group = SMFKGroup()
            group.name = "first"
            try group.save()
            try SMFKMemberV2.migrate(rebuildingTable: true)
            #expect(try tableInfo(fx.db, "sm_fk_member").map(\.name) == ["id", "name", "groupId"])
            let member = try #require(try SMFKMemberV2.find(id: 1))
            #expect(member.name == "Ann" && member.groupId == 1)
        }
    }

    /// Without enforced foreign keys, ALTER TABLE adds the column (no rebuild, no check of
    /// rows it cannot see as wrong), as `createTable()` does.
    @Test func withoutEnforcedForeignKeysTheColumnIsAddedByAlterTable() throws {
        let fx = try SchemaFixture(foreignKeys: false)
        try fx.run {
            try SMFKGroup.createTable()
            try SMFKMemberV1.createTable()
            try SMFKMemberV1().save()
            let statements = try fx.statements { try SMFKMemberV2.migrate(rebuildingTable: true) }
            #expect(statements.contains { $0.hasPrefix("ALTER TABLE \"sm_fk_member\" ADD COLUMN") }, "\(statements)")
            #expect(!statements.contains { $0.contains("_activeobjects_rebuild_") })
            #expect(try tableInfo(fx.db, "sm_fk_member").map(\.name) == ["id", "name", "groupId"])
        }
    }

    /// Other failures of the ALTER stay what they are: here `sm_fk_member` is a view, which
    /// SQLite cannot add a column to.
    @Test func otherFailuresOfTheAlterAreNotDressedAsModelErrors() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SMFKGroup.createTable()
            try fx.db.execute("CREATE VIEW sm_fk_member AS SELECT 1 AS id, 'n' AS name")
            let error = #expect(throws: DatabaseError.self) { try SMFKMemberV2.createTable() }
            #expect(error?.message.contains("view") == true, "\(String(describing: error))")
        }
    }

    /// An empty table takes the column through ALTER TABLE, even with foreign keys enforced.
    @Test func anEmptyTableTakesTheColumnThroughAlterTable() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SMFKGroup.createTable()
            try SMFKMemberV1.createTable()
            let statements = try fx.statements { try SMFKMemberV2.migrate(rebuildingTable: true) }
            #expect(statements.contains { $0.hasPrefix("ALTER TABLE \"sm_fk_member\" ADD COLUMN") }, "\(statements)")
            #expect(!statements.contains { $0.contains("_activeobjects_rebuild_") })
            #expect(try tableInfo(fx.db, "sm_fk_member").map(\.name) == ["id", "name", "groupId"])
        }
    }
}
