import Foundation
import Testing
@testable import ActiveObjects

// Each scenario maps two model classes (V1, V2) onto the same table: "the model changed".

// Dropping a column.
final class RBDropV1: SchemaTestModel {
    override class var tableName: String { "rb_drop" }
    @Column(unique: true) var name: String = ""
    @Column var age: Int = 0
    @Column var obsolete: String? = nil
}
final class RBDropV2: SchemaTestModel {
    override class var tableName: String { "rb_drop" }
    @Column(unique: true) var name: String = ""
    @Column var age: Int = 0
}

// Changing a type: TEXT → INTEGER.
final class RBTypeV1: SchemaTestModel {
    override class var tableName: String { "rb_type" }
    @Column var label: String = ""
    @Column var code: String = ""
}
final class RBTypeV2: SchemaTestModel {
    override class var tableName: String { "rb_type" }
    @Column var label: String = ""
    @Column var code: Int = 0
}

// Changing nullability: optional → non-optional.
final class RBNullV1: SchemaTestModel {
    override class var tableName: String { "rb_null" }
    @Column var name: String = ""
    @Column var nickname: String? = nil
}
final class RBNullV2: SchemaTestModel {
    override class var tableName: String { "rb_null" }
    @Column var name: String = ""
    @Column var nickname: String = ""
}

// Adding a foreign key.
final class RBOwner: SchemaTestModel {
    @Column var name: String = ""
}
final class RBPetV1: SchemaTestModel {
    override class var tableName: String { "rb_pet" }
    @Column var name: String = ""
    @Column var ownerId: Int64? = nil
}
final class RBPetV2: SchemaTestModel {
    override class var tableName: String { "rb_pet" }
    @Column var name: String = ""
    @Column(references: RBOwner.self, onDelete: .cascade) var ownerId: Int64? = nil
    @Column var weight: Double = 2.5   // and a new column while at it
}

// Rebuilding a parent that children reference.
final class RBTeamV1: SchemaTestModel {
    override class var tableName: String { "rb_team" }
    @Column var name: String = ""
    @Column var motto: String = ""
}
final class RBTeamV2: SchemaTestModel {
    override class var tableName: String { "rb_team" }
    @Column var name: String = ""
}
final class RBMember: SchemaTestModel {
    @Column var name: String = ""
    @Column(references: RBTeamV1.self, onDelete: .cascade) var teamId: Int64? = nil
}

/// The state of a table, to compare before and after.
struct TableSnapshot: Equatable {
    var info: [ColumnShape]
    var indexes: [IndexShape]
    var master: [String]
    var rows: [[DatabaseValue]]
    var foreignKeys: [ForeignKeyShape]
    var allTables: [String]

    init(_ db: Database, _ table: String) throws {
        info = try tableInfo(db, table)
        indexes = try indexList(db, table)
        master = try masterSQL(db, table)
        rows = try rawRows(db, table)
        foreignKeys = try foreignKeyList(db, table)
        allTables = try db.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map { try $0[0] }
    }
}

/// `migrate(rebuildingTable: true)`: SQLite's 12-step rebuild, every row kept or nothing changed.
@Suite struct TableRebuildTests {
    /// Rows with gaps in the ids, so that renumbering would show.
    static func seedDrop(_ fx: SchemaFixture) throws {
        try fx.run {
            try RBDropV1.createTable()
            for (i, name) in ["Ann", "Bob", "Cid", "Dee", "Eve"].enumerated() {
                let p = RBDropV1(); p.name = name; p.age = 20 + i; p.obsolete = i.isMultiple(of: 2) ? "x\(i)" : nil
                try p.save()
            }
            _ = try RBDropV1.find(id: 2)?.delete()
        }
        try fx.db.execute("CREATE INDEX rb_drop_age ON rb_drop(age DESC)")
        try fx.db.execute("CREATE INDEX rb_drop_obsolete ON rb_drop(obsolete)")
        try fx.db.execute("CREATE INDEX rb_drop_age_name ON rb_drop(age, name)")
    }

    @Test func droppingAColumnKeepsEveryRowIdAndIndex() throws {
        let fx = try SchemaFixture()
        try Self.seedDrop(fx)
        let before = try fx.db.rows("SELECT id, name, age FROM rb_drop ORDER BY id").map(\.values)
        #expect(before.count == 4)
        let indexSQLBefore = try fx.db.rows("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rb_drop' AND sql IS NOT NULL ORDER BY name")
            .map { "\(try $0["name"] as String): \(try $0["sql"] as String)" }

        // Without the opt-in nothing is dropped.
        try fx.run { try RBDropV2.migrate() }
        #expect(try columnNames(fx.db, "rb_drop") == ["id", "name", "age", "obsolete"])

        try fx.run { try RBDropV2.migrate(rebuildingTable: true) }
        #expect(try tableInfo(fx.db, "rb_drop").map(\.description) == [
            "id INTEGER PK", "name TEXT NOT NULL DEFAULT ''", "age INTEGER NOT NULL DEFAULT 0",
        ])
        #expect(try fx.db.rows("SELECT id, name, age FROM rb_drop ORDER BY id").map(\.values) == before)

        // Old indexes on surviving columns are recreated as they were; the one on the dropped
        // column is gone; the model's unique index is there.
        let indexSQLAfter = try fx.db.rows("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rb_drop' AND sql IS NOT NULL ORDER BY name")
            .map { "\(try $0["name"] as String): \(try $0["sql"] as String)" }
        #expect(indexSQLAfter == indexSQLBefore.filter { !$0.hasPrefix("rb_drop_obsolete") })
        let indexes = try indexList(fx.db, "rb_drop")
        #expect(indexes.contains { $0.name == "rb_drop_age" && $0.columns == ["age"] })
        #expect(indexes.contains { $0.name == "rb_drop_age_name" && $0.columns == ["age", "name"] })
        #expect(!indexes.contains { $0.columns.contains("obsolete") })
        #expect(indexes.contains { $0.unique && $0.columns == ["name"] })
        #expect(try fx.db.rows("SELECT name FROM sqlite_master WHERE name LIKE '%rebuild%'").isEmpty)
        #expect(try fx.db.scalar("PRAGMA integrity_check") as String? == "ok")

        // The model works on the rebuilt table, and new rows continue after the highest id.
        try fx.run {
            #expect(try RBDropV2.findAll().map(\.name) == ["Ann", "Cid", "Dee", "Eve"])
            let p = RBDropV2(); p.name = "Fay"; p.age = 99
            try p.save()
            #expect(p.id == 6)
            let dup = RBDropV2(); dup.name = "Ann"
            expectDatabaseError(.constraint) { try dup.save() }
        }
    }

    @Test func aRebuildKeepsAutoincrementAndItsHighWaterMark() throws {
        let fx = try SchemaFixture()
        // The way FMPersisting declared its tables.
        try fx.db.execute("CREATE TABLE rb_drop (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL DEFAULT '', age INTEGER NOT NULL DEFAULT 0, obsolete TEXT)")
        for name in ["Ann", "Bob", "Cid"] { try fx.db.execute("INSERT INTO rb_drop (name) VALUES (?)", [name]) }
        try fx.db.execute("DELETE FROM rb_drop WHERE name = 'Cid'")   // highest id 3 is gone

        try fx.run { try RBDropV2.migrate(rebuildingTable: true) }
        let sql: String? = try fx.db.scalar("SELECT sql FROM sqlite_master WHERE name = 'rb_drop'")
        #expect(sql?.contains("AUTOINCREMENT") == true)
        #expect(try columnNames(fx.db, "rb_drop") == ["id", "name", "age"])
        try fx.run {
            let p = RBDropV2(); p.name = "Dee"
            try p.save()
            #expect(p.id == 4, "id 3 was used before the rebuild and must not come back")
        }
    }

    @Test func changingATypeConvertsEveryValue() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RBTypeV1.createTable()
            for (label, code) in [("a", "12"), ("b", "7"), ("c", "-3"), ("d", "0")] {
                let row = RBTypeV1(); row.label = label; row.code = code
                try row.save()
            }
        }
        try fx.db.execute("CREATE INDEX rb_type_code ON rb_type(code)")
        #expect(try fx.db.rows("SELECT DISTINCT typeof(code) FROM rb_type").map { try $0[0] as String } == ["text"])

        try fx.run { try RBTypeV2.migrate(rebuildingTable: true) }
        #expect(try tableInfo(fx.db, "rb_type").first { $0.name == "code" }?.description == "code INTEGER NOT NULL DEFAULT 0")
        #expect(try fx.db.rows("SELECT DISTINCT typeof(code) FROM rb_type").map { try $0[0] as String } == ["integer"])
        #expect(try fx.db.rows("SELECT id, label, code FROM rb_type ORDER BY id").map(\.values) == [
            [1, "a", 12], [2, "b", 7], [3, "c", -3], [4, "d", 0],
        ])
        #expect(try indexList(fx.db, "rb_type").map(\.name) == ["rb_type_code"])
        try fx.run { () throws in #expect(try RBTypeV2.where(\.$code > 0).order(by: \.$code).pluck(\.$label) == ["b", "a"]) }
    }

    @Test func makingAColumnNonOptionalWhenNoNULLsExist() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RBNullV1.createTable()
            for (name, nick) in [("Ann", "A"), ("Bob", "")] {
                let row = RBNullV1(); row.name = name; row.nickname = nick
                try row.save()
            }
        }
        try fx.db.execute("CREATE UNIQUE INDEX rb_null_nick ON rb_null(nickname)")
        #expect(try tableInfo(fx.db, "rb_null").first { $0.name == "nickname" }?.notNull == false)

        try fx.run { try RBNullV2.migrate(rebuildingTable: true) }
        #expect(try tableInfo(fx.db, "rb_null").first { $0.name == "nickname" }?.description == "nickname TEXT NOT NULL DEFAULT ''")
        #expect(try fx.db.rows("SELECT id, name, nickname FROM rb_null ORDER BY id").map(\.values) == [
            [1, "Ann", "A"], [2, "Bob", ""],
        ])
        #expect(try indexList(fx.db, "rb_null") == [IndexShape(name: "rb_null_nick", unique: true, columns: ["nickname"])])
        expectDatabaseError(.constraint) { try fx.db.execute("INSERT INTO rb_null (name, nickname) VALUES ('Cid', NULL)") }
    }

    @Test func addingAForeignKey() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RBOwner.createTable()
            try RBPetV1.createTable()
            let ann = RBOwner(); ann.name = "Ann"; try ann.save()
            let bob = RBOwner(); bob.name = "Bob"; try bob.save()
            for (name, owner) in [("Rex", ann.id), ("Tom", bob.id), ("Stray", nil), ("Fido", ann.id)] {
                let pet = RBPetV1(); pet.name = name; pet.ownerId = owner
                try pet.save()
            }
        }
        #expect(try foreignKeyList(fx.db, "rb_pet").isEmpty)
        let before = try fx.db.rows("SELECT id, name, ownerId FROM rb_pet ORDER BY id").map(\.values)

        try fx.run { try RBPetV2.migrate(rebuildingTable: true) }
        #expect(try foreignKeyList(fx.db, "rb_pet") == [
            ForeignKeyShape(from: "ownerId", table: "rb_owner", to: "id", onDelete: "CASCADE"),
        ])
        #expect(try fx.db.rows("SELECT id, name, ownerId FROM rb_pet ORDER BY id").map(\.values) == before)
        #expect(try fx.db.rows("SELECT DISTINCT weight FROM rb_pet").map(\.values) == [[2.5]])
        // The foreign-key column is indexed, and the cascade works.
        #expect(try indexList(fx.db, "rb_pet").contains { $0.columns == ["ownerId"] })
        try fx.db.execute("DELETE FROM rb_owner WHERE name = 'Ann'")
        #expect(try fx.db.rows("SELECT name FROM rb_pet ORDER BY id").map { try $0[0] as String } == ["Tom", "Stray"])
    }

    @Test func addingAForeignKeyThatExistingRowsViolateChangesNothing() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RBOwner.createTable()
            try RBPetV1.createTable()
            let ann = RBOwner(); ann.name = "Ann"; try ann.save()
            for (name, owner) in [("Rex", ann.id), ("Ghost", Int64(42))] {
                let pet = RBPetV1(); pet.name = name; pet.ownerId = owner
                try pet.save()
            }
        }
        let before = try TableSnapshot(fx.db, "rb_pet")
        try fx.run { expectDatabaseError(.constraint) { try RBPetV2.migrate(rebuildingTable: true) } }
        #expect(try TableSnapshot(fx.db, "rb_pet") == before)
        #expect(!fx.db.isInTransaction)
        #expect(try fx.db.scalar("PRAGMA foreign_keys") == 1)
    }

    @Test func aNULLIntoANowNonOptionalColumnThrowsAndChangesNothing() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RBNullV1.createTable()
            for (name, nick) in [("Ann", "A"), ("Bob", nil), ("Cid", "C")] as [(String, String?)] {
                let row = RBNullV1(); row.name = name; row.nickname = nick
                try row.save()
            }
        }
        try fx.db.execute("CREATE INDEX rb_null_name ON rb_null(name)")
        let before = try TableSnapshot(fx.db, "rb_null")

        let error = try fx.run {
            expectActiveObjectError({ try RBNullV2.migrate(rebuildingTable: true) }, matches: \.isTypeMismatch)
        }
        if case let .typeMismatch(table, column, rowID, _, _)? = error {
            #expect(table == "rb_null")
            #expect(column == "nickname")
            #expect(rowID == 2)
        }
        #expect(try TableSnapshot(fx.db, "rb_null") == before)
        #expect(!fx.db.isInTransaction)
        #expect(try fx.db.scalar("PRAGMA foreign_keys") == 1)
    }

    @Test func textThatIsNotANumberIntoANowIntegerColumnThrowsAndChangesNothing() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RBTypeV1.createTable()
            for (label, code) in [("a", "12"), ("b", "7"), ("c", "abc"), ("d", "4")] {
                let row = RBTypeV1(); row.label = label; row.code = code
                try row.save()
            }
        }
        try fx.db.execute("CREATE INDEX rb_type_label ON rb_type(label)")
        try fx.db.execute("CREATE TRIGGER rb_type_touch AFTER UPDATE ON rb_type BEGIN SELECT 1; END")
        let before = try TableSnapshot(fx.db, "rb_type")

        let error = try fx.run {
            expectActiveObjectError({ try RBTypeV2.migrate(rebuildingTable: true) }, matches: \.isTypeMismatch)
        }
        if case let .typeMismatch(table, column, rowID, _, found)? = error {
            #expect(table == "rb_type")
            #expect(column == "code")
            #expect(rowID == 3)
            #expect(found.contains("abc"))
        }
        #expect(try TableSnapshot(fx.db, "rb_type") == before)
        // Still readable by the old model; and once the row is fixed the rebuild goes through.
        try fx.run {
            #expect(try RBTypeV1.countAll() == 4)
            try fx.db.execute("UPDATE rb_type SET code = '3' WHERE code = 'abc'")
            try RBTypeV2.migrate(rebuildingTable: true)
            #expect(try RBTypeV2.all.order(by: "id").pluck(\.$code) == [12, 7, 3, 4])
        }
        // The trigger survived the rebuild.
        #expect(try count(fx.db, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'rb_type_touch'") == 1)
    }

    @Test func noRebuildWhenNothingDiffers() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RBOwner.createTable()
            try RBPetV2.createTable()
            let pet = RBPetV2(); pet.name = "Rex"
            try pet.save()
        }
        let before = try TableSnapshot(fx.db, "rb_pet")
        let statements = try fx.statements { try RBPetV2.migrate(rebuildingTable: true) }
        for word in ["CREATE TABLE", "DROP", "INSERT", "ALTER"] {
            #expect(!statements.contains { $0.uppercased().hasPrefix(word) }, "\(word): \(statements)")
        }
        #expect(try TableSnapshot(fx.db, "rb_pet") == before)

        // And again after a rebuild: the rebuilt table matches the model.
        try fx.run {
            try RBDropV1.createTable()
            try RBDropV2.migrate(rebuildingTable: true)
        }
        let rebuilt = try TableSnapshot(fx.db, "rb_drop")
        let again = try fx.statements { try RBDropV2.migrate(rebuildingTable: true) }
        #expect(!again.contains { $0.uppercased().hasPrefix("DROP") || $0.uppercased().hasPrefix("CREATE TABLE") }, "\(again)")
        #expect(try TableSnapshot(fx.db, "rb_drop") == rebuilt)
    }

    @Test func rebuildingAMissingTableCreatesIt() throws {
        let fx = try SchemaFixture()
        try fx.run { try RBDropV2.migrate(rebuildingTable: true) }
        #expect(try columnNames(fx.db, "rb_drop") == ["id", "name", "age"])
    }

    @Test func rebuildingAParentKeepsItsChildren() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RBTeamV1.createTable()
            try RBMember.createTable()
            let team = RBTeamV1(); team.name = "Red"; team.motto = "go"
            try team.save()
            for name in ["Ann", "Bob"] {
                let member = RBMember(); member.name = name; member.teamId = team.id
                try member.save()
            }
        }
        // DROP TABLE of a parent with cascading children would delete them if foreign keys
        // were enforced during the rebuild.
        try fx.run { try RBTeamV2.migrate(rebuildingTable: true) }
        #expect(try columnNames(fx.db, "rb_team") == ["id", "name"])
        #expect(try count(fx.db, "SELECT count(*) FROM rb_member WHERE teamId = 1") == 2)
        #expect(try fx.db.rows("PRAGMA foreign_key_check").isEmpty)
        // The reference still works after the rename.
        try fx.db.execute("DELETE FROM rb_team")
        #expect(try count(fx.db, "SELECT count(*) FROM rb_member") == 0)
    }

    @Test func aRebuildInsideAMigrationStep() throws {
        let fx = try SchemaFixture()
        try Self.seedDrop(fx)
        var migrator = Migrator()
        migrator.register("001-drop-obsolete") { db in try RBDropV2.migrate(in: db, rebuildingTable: true) }
        try fx.run { try migrator.migrate(fx.db) }
        #expect(try columnNames(fx.db, "rb_drop") == ["id", "name", "age"])
        #expect(try count(fx.db, "SELECT count(*) FROM rb_drop") == 4)
        #expect(try migrator.appliedMigrations(fx.db) == ["001-drop-obsolete"])
    }

    @Test func aFailedRebuildInsideAMigrationStepRollsTheStepBack() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try RBTypeV1.createTable()
            let row = RBTypeV1(); row.label = "bad"; row.code = "abc"
            try row.save()
        }
        var migrator = Migrator()
        #expect(try migrator.appliedMigrations(fx.db) == [])   // creates the bookkeeping table
        let before = try TableSnapshot(fx.db, "rb_type")
        migrator.register("001") { db in
            try db.execute("INSERT INTO rb_type (label, code) VALUES ('new', '1')")
            try RBTypeV2.migrate(in: db, rebuildingTable: true)
        }
        let error = try fx.run { expectActiveObjectError({ try migrator.migrate(fx.db) }, matches: \.isMigrationFailed) }
        if case let .migrationFailed(_, underlying)? = error {
            #expect((underlying as? ActiveObjectError)?.isTypeMismatch == true)
        }
        let after = try TableSnapshot(fx.db, "rb_type")
        #expect(after == before, "\(after) vs \(before)")
        #expect(try migrator.appliedMigrations(fx.db) == [])
    }

    @Test func inlineUniqueConstraintsOfTheOldTableSurvive() throws {
        let fx = try SchemaFixture()
        // A table written by hand with a UNIQUE column constraint (an automatic index).
        try fx.db.execute("CREATE TABLE rb_drop (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', age INTEGER NOT NULL DEFAULT 0 UNIQUE, obsolete TEXT)")
        try fx.db.execute("INSERT INTO rb_drop (name, age, obsolete) VALUES ('Ann', 1, 'x'), ('Bob', 2, NULL)")
        try fx.run { try RBDropV2.migrate(rebuildingTable: true) }
        #expect(try columnNames(fx.db, "rb_drop") == ["id", "name", "age"])
        #expect(try count(fx.db, "SELECT count(*) FROM rb_drop") == 2)
        #expect(try indexList(fx.db, "rb_drop").contains { $0.unique && $0.columns == ["age"] })
        expectDatabaseError(.constraint) { try fx.db.execute("INSERT INTO rb_drop (name, age) VALUES ('Cid', 1)") }
    }
}
