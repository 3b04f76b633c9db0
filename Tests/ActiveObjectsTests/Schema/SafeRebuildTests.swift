import Foundation
import Testing
@testable import ActiveObjects

// `migrate(rebuildingTable: true)` cannot lose rows: children with ON DELETE / ON UPDATE
// CASCADE keep theirs inside and outside a transaction, triggers and views survive, and any
// failure leaves the file exactly as it was.

final class SRGroup: SchemaTestModel {
    override class var tableName: String { "sr_group" }
    @Column var title = ""
}

final class SRParentV1: SchemaTestModel {
    override class var tableName: String { "sr_parent" }
    @Column var name = ""
    @Column var motto: String? = nil
    @Column var code = ""
    @Column var groupId: Int64? = nil
}

/// Drops `motto`: a rebuild.
final class SRParentV2: SchemaTestModel {
    override class var tableName: String { "sr_parent" }
    @Column var name = ""
    @Column var code = ""
    @Column var groupId: Int64? = nil
}

/// `motto` becomes non-optional: rows with NULL cannot be read.
final class SRParentNotNull: SchemaTestModel {
    override class var tableName: String { "sr_parent" }
    @Column var name = ""
    @Column var motto = ""
    @Column var code = ""
    @Column var groupId: Int64? = nil
}

/// `code` becomes unique: duplicates make the index fail, after the table was swapped.
final class SRParentUnique: SchemaTestModel {
    override class var tableName: String { "sr_parent" }
    @Column var name = ""
    @Column var motto: String? = nil
    @Column(unique: true) var code = ""
    @Column var groupId: Int64? = nil
}

/// `code` becomes an integer: text that is not a number cannot be read.
final class SRParentRetyped: SchemaTestModel {
    override class var tableName: String { "sr_parent" }
    @Column var name = ""
    @Column var motto: String? = nil
    @Column var code = 0
    @Column var groupId: Int64? = nil
}

/// `groupId` becomes a foreign key: a row naming no group fails the check before the commit.
final class SRParentForeignKey: SchemaTestModel {
    override class var tableName: String { "sr_parent" }
    @Column var name = ""
    @Column var motto: String? = nil
    @Column var code = ""
    @Column(references: SRGroup.self, onDelete: .setNull) var groupId: Int64? = nil
}

@Suite struct SafeRebuildTests {
    /// A file database with default options: parents, children that cascade on delete and on
    /// update, children whose key is set to NULL, a log table, triggers and views.
    static func seeded() throws -> SchemaFixture {
        let folder = try TemporaryFolder()
        var fx = try SchemaFixture(path: folder.path("rebuild.sqlite"))
        fx.folder = folder
        try fx.run {
            try SRGroup.createTable()
            try SRParentV1.createTable()
            let group = SRGroup(); group.title = "g"; try group.save()
            for (index, name) in ["Ann", "Bob", "Cid", "Dee"].enumerated() {
                let parent = SRParentV1()
                parent.name = name
                parent.motto = index == 1 ? nil : "motto \(index)"
                parent.code = index == 2 ? "abc" : index == 3 ? "1" : "\(index + 1)"   // "1" twice, "abc"
                parent.groupId = index == 0 ? 42 : group.id                                // 42: no such group
                try parent.save()
            }
        }
        try fx.db.execute("""
            CREATE TABLE sr_child (id INTEGER PRIMARY KEY, label TEXT NOT NULL,
            parentId INTEGER NOT NULL REFERENCES sr_parent(id) ON DELETE CASCADE ON UPDATE CASCADE)
            """)
        try fx.db.execute("CREATE TABLE sr_loose (id INTEGER PRIMARY KEY, parentId INTEGER REFERENCES sr_parent(id) ON DELETE SET NULL)")
        try fx.db.execute("CREATE TABLE sr_log (line TEXT NOT NULL)")
        for parent in 1...4 {
            for child in 0..<parent { try fx.db.execute("INSERT INTO sr_child (label, parentId) VALUES (?, ?)", ["c\(parent).\(child)", parent]) }
            // (Not for parent 4, whose key an update changes: this foreign key has no ON UPDATE action.)
            if parent < 4 { try fx.db.execute("INSERT INTO sr_loose (parentId) VALUES (?)", [parent]) }
        }
        try fx.db.execute("CREATE TRIGGER sr_parent_named AFTER UPDATE OF name ON sr_parent BEGIN INSERT INTO sr_log VALUES ('renamed ' || NEW.name); END")
        try fx.db.execute("CREATE TRIGGER sr_parent_gone AFTER DELETE ON sr_parent BEGIN INSERT INTO sr_log VALUES ('deleted ' || OLD.name); END")
        try fx.db.execute("CREATE TRIGGER sr_child_added AFTER INSERT ON sr_child BEGIN UPDATE sr_parent SET name = name || '+' WHERE id = NEW.parentId; END")
        try fx.db.execute("CREATE VIEW sr_family AS SELECT p.name, c.label FROM sr_parent AS p JOIN sr_child AS c ON c.parentId = p.id")
        try fx.db.execute("CREATE VIEW sr_names AS SELECT id, name, code FROM sr_parent")
        return fx
    }

    /// Everything a parent rebuild must keep.
    static func expectFamiliesIntact(_ fx: SchemaFixture, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try count(fx.db, "SELECT count(*) FROM sr_parent") == 4, sourceLocation: sourceLocation)
        #expect(try count(fx.db, "SELECT count(*) FROM sr_child") == 10, sourceLocation: sourceLocation)
        #expect(try count(fx.db, "SELECT count(*) FROM sr_loose WHERE parentId IS NOT NULL") == 3, sourceLocation: sourceLocation)
        #expect(try fx.db.rows("SELECT parentId, count(*) FROM sr_child GROUP BY parentId ORDER BY parentId").map(\.values)
                == [[1, 1], [2, 2], [3, 3], [4, 4]], sourceLocation: sourceLocation)
        #expect(try count(fx.db, "SELECT count(*) FROM sr_family") == 10, sourceLocation: sourceLocation)
        #expect(try count(fx.db, "SELECT count(*) FROM sr_log") == 0, sourceLocation: sourceLocation)
        #expect(try fx.db.scalar("PRAGMA integrity_check") as String? == "ok", sourceLocation: sourceLocation)
        #expect(try connectionFlags(fx.db) == [1, 0], "foreign_keys, legacy_alter_table", sourceLocation: sourceLocation)
    }

    /// The foreign keys, triggers and views work on the rebuilt table.
    static func expectTheTableStillWorks(_ fx: SchemaFixture, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try fx.db.execute("UPDATE sr_parent SET id = 40 WHERE id = 4")              // ON UPDATE CASCADE
        #expect(try count(fx.db, "SELECT count(*) FROM sr_child WHERE parentId = 40") == 4, sourceLocation: sourceLocation)
        try fx.db.execute("INSERT INTO sr_child (label, parentId) VALUES ('new', 40)")  // a trigger on the child…
        #expect(try fx.db.rows("SELECT line FROM sr_log").map { try $0[0] as String } == ["renamed Dee+"],  // …and one on the parent
                sourceLocation: sourceLocation)
        try fx.db.execute("DELETE FROM sr_parent WHERE id = 2")                         // ON DELETE CASCADE, SET NULL
        #expect(try count(fx.db, "SELECT count(*) FROM sr_child WHERE parentId = 2") == 0, sourceLocation: sourceLocation)
        #expect(try count(fx.db, "SELECT count(*) FROM sr_loose WHERE parentId IS NULL") == 1, sourceLocation: sourceLocation)
        #expect(try count(fx.db, "SELECT count(*) FROM sr_log WHERE line = 'deleted Bob'") == 1, sourceLocation: sourceLocation)
        #expect(try count(fx.db, "SELECT count(*) FROM sr_family") == 9, sourceLocation: sourceLocation)
        #expect(try fx.db.rows("PRAGMA foreign_key_check").isEmpty, sourceLocation: sourceLocation)
    }

    @Test func outsideATransactionCascadingChildrenKeepTheirRows() throws {
        let fx = try Self.seeded()
        let plan = try fx.run { try SRParentV2.schemaPlan(rebuildingTable: true) }
        #expect(try writes(fx) { try SRParentV2.migrate(rebuildingTable: true) } == plan)
        #expect(try columnNames(fx.db, "sr_parent") == ["id", "name", "code", "groupId"])
        try Self.expectFamiliesIntact(fx)
        try Self.expectTheTableStillWorks(fx)
    }

    @Test func insideACallersTransactionCascadingChildrenKeepTheirRows() throws {
        let fx = try Self.seeded()
        try fx.run {
            try fx.db.transaction {
                try fx.db.execute("INSERT INTO sr_log VALUES ('in the transaction')")
                try SRParentV2.migrate(rebuildingTable: true)
                #expect(try count(fx.db, "SELECT count(*) FROM sr_child") == 10)
                #expect(try connectionFlags(fx.db) == [1, 0])
                try fx.db.execute("DELETE FROM sr_log")
            }
        }
        #expect(try columnNames(fx.db, "sr_parent") == ["id", "name", "code", "groupId"])
        try Self.expectFamiliesIntact(fx)
        try Self.expectTheTableStillWorks(fx)
    }

    @Test func insideAMigratorStepCascadingChildrenKeepTheirRows() throws {
        let fx = try Self.seeded()
        var migrator = Migrator()
        migrator.register("001-drop-motto") { db in try SRParentV2.migrate(in: db, rebuildingTable: true) }
        migrator.register("002-mark") { db in try db.execute("INSERT INTO sr_log VALUES ('002')") }
        // Even when the migrator itself runs inside a transaction (each step a savepoint).
        try fx.run { try fx.db.transaction { try migrator.migrate(fx.db) } }
        #expect(try migrator.appliedMigrations(fx.db) == ["001-drop-motto", "002-mark"])
        try fx.db.execute("DELETE FROM sr_log")
        try Self.expectFamiliesIntact(fx)
        try Self.expectTheTableStillWorks(fx)
    }

    @Test func triggersAndViewsAreAsTheyWere() throws {
        let fx = try Self.seeded()
        let sql = "SELECT type, name, sql FROM sqlite_master WHERE type IN ('trigger', 'view') ORDER BY name"
        let before = try fx.db.rows(sql).map(\.values)
        let family = try fx.db.rows("SELECT * FROM sr_family ORDER BY label").map(\.values)
        try fx.run { try SRParentV2.migrate(rebuildingTable: true) }
        #expect(try fx.db.rows(sql).map(\.values) == before)
        #expect(try fx.db.rows("SELECT * FROM sr_family ORDER BY label").map(\.values) == family)
        #expect(try fx.db.rows("SELECT id, name, code FROM sr_names ORDER BY id").map(\.values)
                == [[1, "Ann", "1"], [2, "Bob", "2"], [3, "Cid", "abc"], [4, "Dee", "1"]])
    }

    enum Failure: String, CaseIterable, CustomTestStringConvertible {
        /// A NULL for a now non-optional column: found by the read before anything is written.
        case nullIntoNonOptional
        /// Text that is no number for a now integer column: found by the same read.
        case textIntoInteger
        /// Duplicates for a now unique column: the index fails after the old table was dropped.
        case duplicateForUnique
        /// A row naming no parent for a new foreign key: `foreign_key_check` fails last.
        case foreignKeyViolation
        /// A view uses the dropped column: the check of the views fails last.
        case viewOfADroppedColumn

        var testDescription: String { rawValue }

        func run() throws {
            switch self {
            case .nullIntoNonOptional: try SRParentNotNull.migrate(rebuildingTable: true)
            case .textIntoInteger: try SRParentRetyped.migrate(rebuildingTable: true)
            case .duplicateForUnique: try SRParentUnique.migrate(rebuildingTable: true)
            case .foreignKeyViolation: try SRParentForeignKey.migrate(rebuildingTable: true)
            case .viewOfADroppedColumn: try SRParentV2.migrate(rebuildingTable: true)
            }
        }

        func matches(_ error: any Error) -> Bool {
            switch self {
            case .nullIntoNonOptional, .textIntoInteger: return (error as? ActiveObjectError)?.isTypeMismatch == true
            case .duplicateForUnique, .foreignKeyViolation: return (error as? DatabaseError)?.resultCode == .constraint
            case .viewOfADroppedColumn:
                guard case let .invalidModel(_, reason)? = error as? ActiveObjectError else { return false }
                return reason.contains("sr_mottos")
            }
        }
    }

    @Test(arguments: Failure.allCases, [false, true])
    func aFailureLeavesTheFileAsItWas(failure: Failure, insideATransaction: Bool) throws {
        let fx = try Self.seeded()
        if failure == .viewOfADroppedColumn {
            try fx.db.execute("CREATE VIEW sr_mottos AS SELECT name, motto FROM sr_parent")
        }
        let before = try databaseDump(fx.db)
        func attempt() throws {
            do {
                try failure.run()
                Issue.record("\(failure): the rebuild went through")
            } catch {
                #expect(failure.matches(error), "\(error)")
            }
        }
        try fx.run {
            if insideATransaction {
                try fx.db.transaction {
                    try attempt()
                    #expect(try databaseDump(fx.db) == before)
                    #expect(try connectionFlags(fx.db) == [1, 0])
                }
            } else {
                try attempt()
            }
        }
        #expect(!fx.db.isInTransaction)
        #expect(try databaseDump(fx.db) == before)
        #expect(try connectionFlags(fx.db) == [1, 0])
        try Self.expectFamiliesIntact(fx)
        // The file on disk, seen by another connection, is the same too.
        let other = try Database(path: fx.db.path)
        defer { try? other.close() }
        #expect(try databaseDump(other) == before)
    }

    @Test func aRebuildWithoutEnforcedForeignKeysLeavesThemOff() throws {
        let folder = try TemporaryFolder()
        let fx = try SchemaFixture(path: folder.path("off.sqlite"), foreignKeys: false)
        try fx.run {
            try SRParentV1.createTable()
            try SRParentV2.migrate(rebuildingTable: true)
        }
        #expect(try connectionFlags(fx.db) == [0, 0])
    }
}
