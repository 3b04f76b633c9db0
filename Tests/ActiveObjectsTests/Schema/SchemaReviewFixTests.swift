import Foundation
import Testing
@testable import ActiveObjects

// Edges of the issue-24 review fixes to schema changes (Issue24ReviewTests covers the findings):
// expression defaults, AUTOINCREMENT of a declared key, real id columns, triggers, ON UPDATE,
// run-time date defaults.

/// `createdAt` with a run-time default, `stampedAt` with the role and a nil default.
final class SRFStamped: ModelTestRecord {
    override class var tableName: String { "srf_stamped" }
    @Column var name = ""
    @Column(role: .createdAt) var createdAt = Date()
    @Column(role: .updatedAt) var stampedAt: Date? = nil
}

/// A non-optional declared integer key.
final class SRFAccount: ModelTestRecord {
    override class var tableName: String { "srf_account" }
    override class var primaryKey: String { "accountid" }
    @Column var accountid: Int64 = 0
    @Column var name = ""
}

final class SRFItem: ModelTestRecord {
    override class var tableName: String { "srf_item" }
    @Column var name = ""
}

final class SRFNote: ModelTestRecord {
    override class var tableName: String { "srf_note" }
    @Column var body = ""
}

final class SRFOwner: ModelTestRecord {
    override class var tableName: String { "srf_owner" }
    @Column var name = ""
}

final class SRFPet: ModelTestRecord {
    override class var tableName: String { "srf_pet" }
    @Column var name = ""
    @Column(references: SRFOwner.self, onDelete: .setNull) var ownerId: Int64? = nil
}

/// A date constant far from now: a literal default, frozen as DEFAULT like any constant.
final class SRFEpoch: ModelTestRecord {
    override class var tableName: String { "srf_epoch" }
    @Column var start = Date(timeIntervalSince1970: 1_000_000_000)
    @Column var tomorrow = Calendar(identifier: .gregorian).startOfDay(for: Date()).addingTimeInterval(86_400)
}

@Suite struct SchemaReviewFixTests {
    @Test func aRebuildKeepsExpressionDefaultsOfStampedAndRunTimeColumns() throws {
        try withFileModelDB { db in
            try db.execute("""
                CREATE TABLE srf_stamped (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', extra TEXT,
                createdAt TEXT NOT NULL DEFAULT (datetime('now')), stampedAt TEXT DEFAULT CURRENT_TIMESTAMP)
                """)
            let plan = try SRFStamped.schemaPlan(rebuildingTable: true)
            let create = try #require(plan.first { $0.hasPrefix("CREATE TABLE") })
            #expect(create.contains("\"createdAt\" TEXT NOT NULL DEFAULT (datetime('now'))"))
            #expect(create.contains("\"stampedAt\" TEXT DEFAULT CURRENT_TIMESTAMP"))
            try SRFStamped.migrate(rebuildingTable: true)
            try db.execute("INSERT INTO srf_stamped (name) VALUES ('other tool')")
            let stamped: Int = try db.scalar("SELECT count(*) FROM srf_stamped WHERE createdAt IS NOT NULL AND stampedAt IS NOT NULL") ?? 0
            #expect(stamped == 1)
            #expect(try SRFStamped.schemaPlan(rebuildingTable: true).isEmpty)
        }
    }

    @Test func aLiteralDefaultOfARunTimeColumnIsStillFrozen() throws {
        try withFileModelDB { db in
            try db.execute("CREATE TABLE srf_stamped (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', createdAt TEXT NOT NULL DEFAULT '2001-01-01', stampedAt TEXT)")
            let plan = try SRFStamped.schemaPlan(rebuildingTable: true)
            let create = try #require(plan.first { $0.hasPrefix("CREATE TABLE") })
            #expect(create.contains("\"createdAt\" TEXT NOT NULL,"))
        }
    }

    @Test func aRebuildKeepsAutoincrementOfANonOptionalDeclaredKey() throws {
        try withFileModelDB { db in
            try db.execute("CREATE TABLE srf_account (accountid INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL DEFAULT '', extra TEXT)")
            for name in ["a", "b", "c"] { try db.execute("INSERT INTO srf_account (name) VALUES (?)", [name]) }
            try db.execute("DELETE FROM srf_account WHERE accountid = 3")
            let plan = try SRFAccount.schemaPlan(rebuildingTable: true)
            #expect(plan.contains { $0.contains("\"accountid\" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT") })
            try SRFAccount.migrate(rebuildingTable: true)
            try db.execute("INSERT INTO srf_account (name) VALUES ('d')")
            let ids: [Int64] = try db.rows("SELECT accountid FROM srf_account ORDER BY accountid").map { try $0["accountid"] }
            #expect(ids == [1, 2, 4])
        }
    }

    @Test func aRebuildWithoutAutoincrementAddsNone() throws {
        try withFileModelDB { db in
            try db.execute("CREATE TABLE srf_account (accountid INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', extra TEXT)")
            let plan = try SRFAccount.schemaPlan(rebuildingTable: true)
            #expect(!plan.contains { $0.uppercased().contains("AUTOINCREMENT") })
            #expect(plan.contains { $0.contains("PRIMARY KEY (\"accountid\")") })
        }
    }

    @Test func aRebuildCopiesTheIdsOfAWithoutRowIDTable() throws {
        try withFileModelDB { db in
            try db.execute("CREATE TABLE srf_item (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '') WITHOUT ROWID")
            try db.execute("INSERT INTO srf_item (id, name) VALUES (100, 'a'), (200, 'b')")
            try SRFItem.migrate(rebuildingTable: true)
            let ids: [Int64] = try db.rows("SELECT rowid FROM srf_item ORDER BY rowid").map { try $0[0] }
            #expect(ids == [100, 200])
        }
    }

    @Test func aTriggerThatNamesADroppedColumnRefusesTheRebuildAndChangesNothing() throws {
        try withFileModelDB { db in
            try db.execute("CREATE TABLE srf_note (id INTEGER PRIMARY KEY, body TEXT NOT NULL DEFAULT '', extra TEXT)")
            try db.execute("CREATE TABLE srf_log (what TEXT)")
            try db.execute("CREATE TRIGGER srf_note_kept AFTER INSERT ON srf_note BEGIN INSERT INTO srf_log VALUES (NEW.body); END")
            try db.execute("CREATE TRIGGER srf_note_broken AFTER UPDATE OF body ON srf_note BEGIN INSERT INTO srf_log VALUES (NEW.extra); END")
            try db.execute("INSERT INTO srf_note (body, extra) VALUES ('a', 'x')")
            let before = try databaseDump(db)
            do {
                try SRFNote.migrate(rebuildingTable: true)
                Issue.record("the rebuild committed with a broken trigger")
            } catch ActiveObjectError.invalidModel(_, let reason) {
                #expect(reason.contains("srf_note_broken"))
                #expect(!reason.contains("srf_note_kept"))
            }
            #expect(try databaseDump(db) == before)
        }
    }

    @Test func aTriggerThatNamesOnlyKeptColumnsSurvivesTheRebuild() throws {
        try withFileModelDB { db in
            try db.execute("CREATE TABLE srf_note (id INTEGER PRIMARY KEY, body TEXT NOT NULL DEFAULT '', extra TEXT)")
            try db.execute("CREATE TABLE srf_log (what TEXT)")
            try db.execute("CREATE TRIGGER srf_note_logged AFTER DELETE ON srf_note BEGIN INSERT INTO srf_log VALUES (OLD.body); END")
            try db.execute("INSERT INTO srf_note (body, extra) VALUES ('a', 'x')")
            try SRFNote.migrate(rebuildingTable: true)
            try db.execute("DELETE FROM srf_note")
            let logged: [String] = try db.rows("SELECT what FROM srf_log").map { try $0[0] }
            #expect(logged == ["a"])
        }
    }

    @Test func onUpdateIsKeptForTheSameParentAndIsNoReasonToRebuild() throws {
        try withFileModelDB { db in
            try SRFOwner.createTable()
            try db.execute("""
                CREATE TABLE srf_pet (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '',
                ownerId INTEGER REFERENCES srf_owner(id) ON DELETE SET NULL ON UPDATE CASCADE)
                """)
            try db.execute("CREATE INDEX srf_pet_ownerId_index ON srf_pet(ownerId)")
            #expect(try SRFPet.schemaPlan(rebuildingTable: true).isEmpty)
            try db.execute("ALTER TABLE srf_pet ADD COLUMN extra TEXT")
            let plan = try SRFPet.schemaPlan(rebuildingTable: true)
            #expect(plan.contains { $0.contains("REFERENCES \"srf_owner\"(\"id\") ON DELETE SET NULL ON UPDATE CASCADE") })
        }
    }

    @Test func aDateConstantFarFromNowIsFrozenAndTomorrowIsNot() throws {
        try withFileModelDB { db in
            try SRFEpoch.createTable()
            let sql: String = try db.scalar("SELECT sql FROM sqlite_master WHERE name = 'srf_epoch'") ?? ""
            #expect(sql.contains("\"start\" TEXT NOT NULL DEFAULT '2001-09-09"))
            #expect(sql.contains("\"tomorrow\" TEXT NOT NULL,") || sql.contains("\"tomorrow\" TEXT NOT NULL)"))
        }
    }
}
