import Foundation
import Testing
@testable import ActiveObjects

// `schemaPlan()`, `@Column(renamedFrom:)` and defaults computed at run time (API §19).

final class SPPostV1: SchemaTestModel {
    override class var tableName: String { "sp_post" }
    @Column var title = ""
    @Column(indexed: true) var headline = ""
}

/// `headline` became `subtitle`.
final class SPPostV2: SchemaTestModel {
    override class var tableName: String { "sp_post" }
    @Column var title = ""
    @Column(indexed: true, renamedFrom: "headline") var subtitle = ""
}

/// The rename, and a change only a rebuild makes (`title` becomes optional).
final class SPPostV3: SchemaTestModel {
    override class var tableName: String { "sp_post" }
    @Column var title: String? = nil
    @Column(indexed: true, renamedFrom: "headline") var subtitle = ""
}

/// `renamedFrom:` naming the column another property maps to.
final class SPClashOtherColumn: SchemaTestModel {
    override class var tableName: String { "sp_clash" }
    @Column var title = ""
    @Column(renamedFrom: "title") var heading = ""
}

/// Two properties `renamedFrom:` the same old name.
final class SPClashTwice: SchemaTestModel {
    override class var tableName: String { "sp_clash" }
    @Column(renamedFrom: "old") var first = ""
    @Column(renamedFrom: "old") var second = ""
}

final class SPStampedV1: SchemaTestModel {
    override class var tableName: String { "sp_stamped" }
    @Column var title = ""
}

/// Defaults computed at run time beside constant ones.
final class SPStampedV2: SchemaTestModel {
    override class var tableName: String { "sp_stamped" }
    @Column var title = ""
    @Column var createdAt = Date()
    @Column var token = UUID()
    @Column var label = "fixed"
    @Column var seen: Date? = Date()
}

final class SPSyncNoteV1: SchemaTestModel {
    override class var tableName: String { "sp_sync_note" }
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = UUID()
    @Column var title = ""
    @Column var headline = ""
}

final class SPSyncNoteV2: SchemaTestModel {
    override class var tableName: String { "sp_sync_note" }
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = UUID()
    @Column var title = ""
    @Column(renamedFrom: "headline") var subtitle = ""
}

@Suite struct SchemaPlanTests {
    // MARK: schemaPlan()

    @Test func aNewTablesPlanIsWhatCreateTableRunsAndThenNothingIsLeft() throws {
        let fx = try SchemaFixture()
        try fx.run {
            let plan = try SPPostV1.schemaPlan()
            #expect(plan == [
                #"CREATE TABLE IF NOT EXISTS "sp_post" ("id" INTEGER PRIMARY KEY, "title" TEXT NOT NULL DEFAULT '', "headline" TEXT NOT NULL DEFAULT '')"#,
                #"CREATE INDEX IF NOT EXISTS "sp_post_headline_index" ON "sp_post"("headline")"#,
            ])
            #expect(try writes(fx) { try SPPostV1.createTable() } == plan)
            #expect(try SPPostV1.schemaPlan().isEmpty)
            #expect(try SPPostV1.schemaPlan(rebuildingTable: true).isEmpty)
            #expect(try writes(fx) { try SPPostV1.createTable() }.isEmpty)
        }
    }

    @Test func schemaPlanRunsNothing() throws {
        let folder = try TemporaryFolder()
        let fx = try SchemaFixture(path: folder.path("plan.sqlite"))
        try fx.run {
            try SPPostV1.createTable()
            try fx.db.execute("INSERT INTO sp_post (title, headline) VALUES ('a', 'b')")
            try fx.db.execute("ALTER TABLE sp_post ADD COLUMN legacy TEXT")
            let before = try databaseDump(fx.db)
            var plans: [[String]] = []
            let traced = try fx.statements {
                plans.append(try SPPostV2.schemaPlan())
                plans.append(try SPPostV3.schemaPlan(rebuildingTable: true))
                plans.append(try SPStampedV2.schemaPlan())
            }
            #expect(writingStatements(traced).isEmpty, "\(traced)")
            #expect(plans.allSatisfy { !$0.isEmpty })
            #expect(try databaseDump(fx.db) == before)
        }
    }

    @Test func schemaPlanInADatabaseAndWithoutOne() throws {
        let fx = try SchemaFixture()
        #expect(try SPPostV1.schemaPlan(in: fx.db).first?.hasPrefix("CREATE TABLE") == true)
        #expect(try SPPostV1.schemaPlan(in: fx.db, rebuildingTable: true) == SPPostV1.schemaPlan(in: fx.db))
        // No database bound: the model says so.
        expectActiveObjectError({ _ = try SPPostV1.schemaPlan() }) { error in
            if case .noDatabase = error { true } else { false }
        }
    }

    // MARK: renamedFrom

    @Test func renamingAColumnKeepsEveryValue() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SPPostV1.createTable()
            for (title, headline) in [("a", "first"), ("b", "it's"), ("c", "")] {
                let post = SPPostV1(); post.title = title; post.headline = headline
                try post.save()
            }
            try fx.db.execute("CREATE INDEX sp_post_by_headline ON sp_post(headline, title)")
            let plan = try SPPostV2.schemaPlan()
            #expect(plan == [
                #"DROP INDEX "sp_post_headline_index""#,
                #"ALTER TABLE "sp_post" RENAME COLUMN "headline" TO "subtitle""#,
                #"CREATE INDEX IF NOT EXISTS "sp_post_subtitle_index" ON "sp_post"("subtitle")"#,
            ])
            #expect(try writes(fx) { try SPPostV2.createTable() } == plan)
            #expect(try SPPostV2.schemaPlan().isEmpty)
            #expect(try columnNames(fx.db, "sp_post") == ["id", "title", "subtitle"])
            #expect(try SPPostV2.all.order(by: "id").pluck(\.$subtitle) == ["first", "it's", ""])
            // The user's index follows the column; the library's is named after the new name.
            #expect(try indexList(fx.db, "sp_post") == [
                IndexShape(name: "sp_post_by_headline", unique: false, columns: ["subtitle", "title"]),
                IndexShape(name: "sp_post_subtitle_index", unique: false, columns: ["subtitle"]),
            ])
        }
    }

    @Test func whenBothColumnsExistNothingIsRenamed() throws {
        let fx = try SchemaFixture()
        try fx.db.execute("CREATE TABLE sp_post (id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', headline TEXT NOT NULL DEFAULT '', subtitle TEXT NOT NULL DEFAULT '')")
        try fx.db.execute("INSERT INTO sp_post (title, headline, subtitle) VALUES ('a', 'old', 'new')")
        try fx.run {
            let plan = try SPPostV2.schemaPlan()
            #expect(plan == [#"CREATE INDEX IF NOT EXISTS "sp_post_subtitle_index" ON "sp_post"("subtitle")"#])
            try SPPostV2.createTable()
            #expect(try columnNames(fx.db, "sp_post") == ["id", "title", "headline", "subtitle"])
            #expect(try SPPostV2.all.pluck(\.$subtitle) == ["new"])
            #expect(try fx.db.scalar("SELECT headline FROM sp_post") as String? == "old")
            // A rebuild drops the old column, as any column the model no longer declares.
            try SPPostV2.migrate(rebuildingTable: true)
            #expect(try columnNames(fx.db, "sp_post") == ["id", "title", "subtitle"])
            #expect(try SPPostV2.all.pluck(\.$subtitle) == ["new"])
        }
    }

    @Test func aRebuildRenamesTooAndKeepsTheIndexesAndTriggersThatNameTheColumn() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SPPostV1.createTable()
            for (title, headline) in [("a", "first"), ("b", "second")] {
                let post = SPPostV1(); post.title = title; post.headline = headline
                try post.save()
            }
            try fx.db.execute("CREATE TABLE sp_post_log (line TEXT)")
            try fx.db.execute("CREATE INDEX sp_post_by_headline ON sp_post(headline)")
            try fx.db.execute("CREATE TRIGGER sp_post_changed AFTER UPDATE OF headline ON sp_post BEGIN INSERT INTO sp_post_log VALUES (NEW.headline); END")
            try fx.db.execute("CREATE VIEW sp_post_headlines AS SELECT id, headline FROM sp_post")
            let plan = try SPPostV3.schemaPlan(rebuildingTable: true)
            #expect(plan.contains(#"ALTER TABLE "sp_post" RENAME COLUMN "headline" TO "subtitle""#), "\(plan)")
            #expect(try writes(fx) { try SPPostV3.migrate(rebuildingTable: true) } == plan)
            #expect(try SPPostV3.schemaPlan(rebuildingTable: true).isEmpty)
            #expect(try tableInfo(fx.db, "sp_post").map(\.description) == [
                "id INTEGER PK", "title TEXT DEFAULT NULL", "subtitle TEXT NOT NULL DEFAULT ''",
            ])
            #expect(try SPPostV3.all.order(by: "id").pluck(\.$subtitle) == ["first", "second"])
            #expect(try indexList(fx.db, "sp_post").map(\.description) == [
                "sp_post_by_headline(subtitle)", "sp_post_subtitle_index(subtitle)",
            ])
            try fx.db.execute("UPDATE sp_post SET subtitle = 'changed' WHERE id = 1")
            #expect(try fx.db.rows("SELECT line FROM sp_post_log").map { try $0[0] as String } == ["changed"])
            #expect(try fx.db.rows("SELECT * FROM sp_post_headlines ORDER BY id").map(\.values) == [[1, "changed"], [2, "second"]])
        }
    }

    @Test func renamedFromAnotherPropertysColumnIsRefused() throws {
        let fx = try SchemaFixture()
        try fx.run {
            let error = expectActiveObjectError({ try SPClashOtherColumn.createTable() }, matches: \.isInvalidModel)
            if case let .invalidModel(model, reason)? = error {
                #expect(model == "SPClashOtherColumn")
                #expect(reason.contains("heading") && reason.contains("\"title\""), "\(reason)")
            }
            expectActiveObjectError({ _ = try SPClashOtherColumn.schemaPlan() }, matches: \.isInvalidModel)
        }
        #expect(try !tableExists(fx.db, "sp_clash"))
    }

    @Test func twoPropertiesRenamedFromOneNameAreRefused() throws {
        let fx = try SchemaFixture()
        try fx.run {
            let error = expectActiveObjectError({ try SPClashTwice.createTable() }, matches: \.isInvalidModel)
            if case let .invalidModel(model, reason)? = error {
                #expect(model == "SPClashTwice")
                #expect(reason.contains("first") && reason.contains("second") && reason.contains("\"old\""), "\(reason)")
            }
        }
        #expect(try !tableExists(fx.db, "sp_clash"))
    }

    @Test func aSynchronizedModelRenamesTheColumnInItsBookkeepingAndTriggers() throws {
        let fx = try SchemaFixture()
        try fx.run {
            let created = try SPSyncNoteV1.schemaPlan()
            #expect(created.contains { $0.hasPrefix("CREATE TRIGGER \"activeobjects_sync_sp_sync_note_update\"") }, "\(created)")
            #expect(try writes(fx) { try SPSyncNoteV1.createTable() } == created)
            #expect(try SPSyncNoteV1.schemaPlan().isEmpty)
            let note = SPSyncNoteV1(); note.title = "t"; note.headline = "h"
            try note.save()
            let key = note.uuid.uuidString.lowercased()
            try fx.db.execute("UPDATE sp_sync_note SET headline = 'h2', title = 't2'")
            // Fields as a fold records them: one only under the old name, one under both (the
            // later stamp wins), one only under the new name.
            try fx.db.execute("""
                INSERT INTO activeobjects_sync_fields (tbl, pk, col, hlc, node, parked, value) VALUES
                ('sp_sync_note', ?, 'headline', 10, 1, 0, NULL), ('sp_sync_note', ?, 'title', 10, 1, 0, NULL),
                ('sp_sync_note', 'k2', 'headline', 30, 1, 0, NULL), ('sp_sync_note', 'k2', 'subtitle', 20, 2, 0, NULL),
                ('sp_sync_note', 'k3', 'headline', 5, 1, 0, NULL), ('sp_sync_note', 'k3', 'subtitle', 40, 2, 0, NULL)
                """, [key, key])

            let plan = try SPSyncNoteV2.schemaPlan()
            #expect(plan.first == #"ALTER TABLE "sp_sync_note" RENAME COLUMN "headline" TO "subtitle""#)
            #expect(plan.contains { $0.hasPrefix("UPDATE OR IGNORE activeobjects_sync_fields") }, "\(plan)")
            #expect(plan.contains { $0.hasPrefix("CREATE TRIGGER \"activeobjects_sync_sp_sync_note_update\"") && $0.contains("'subtitle\u{1F}'") })
            #expect(try writes(fx) { try SPSyncNoteV2.createTable() } == plan)
            #expect(try SPSyncNoteV2.schemaPlan().isEmpty)

            let fields = try fx.db.rows("SELECT pk, col, hlc, value FROM activeobjects_sync_fields WHERE tbl = 'sp_sync_note' ORDER BY pk, col")
                .map { "\($0.values)" }
            #expect(fields == [
                "[TEXT '\(key)', TEXT 'subtitle', INTEGER 10, NULL]", "[TEXT '\(key)', TEXT 'title', INTEGER 10, NULL]",
                "[TEXT 'k2', TEXT 'subtitle', INTEGER 30, NULL]",
                "[TEXT 'k3', TEXT 'subtitle', INTEGER 40, NULL]",
            ])
            // The log entry not folded yet names the new column.
            #expect(try fx.db.rows("SELECT cols FROM activeobjects_sync_log WHERE kind = 1").map { try $0[0] as String }
                    == ["title\u{1F}subtitle\u{1F}"])
            // And the triggers record the new name.
            try fx.db.execute("UPDATE sp_sync_note SET subtitle = 'h3'")
            #expect(try fx.db.scalar("SELECT cols FROM activeobjects_sync_log WHERE kind = 1 ORDER BY seq DESC LIMIT 1") as String?
                    == "subtitle\u{1F}")
        }
    }

    @Test func aSynchronizedTableRebuildWritesItsTriggersAnewAndRenames() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SPSyncNoteV1.createTable()
            let note = SPSyncNoteV1(); note.title = "t"; note.headline = "h"
            try note.save()
            try fx.db.execute("ALTER TABLE sp_sync_note ADD COLUMN legacy TEXT")
            let logged = try count(fx.db, "SELECT count(*) FROM activeobjects_sync_log")
            let plan = try SPSyncNoteV2.schemaPlan(rebuildingTable: true)
            #expect(plan.contains { $0.hasPrefix("DROP TABLE") }, "\(plan)")
            #expect(!plan.contains { $0.hasPrefix("DROP TRIGGER") }, "\(plan)")
            #expect(plan.filter { $0.hasPrefix("CREATE TRIGGER \"activeobjects_sync_sp_sync_note_") }.count == 3, "\(plan)")
            #expect(try writes(fx) { try SPSyncNoteV2.migrate(rebuildingTable: true) } == plan)
            #expect(try SPSyncNoteV2.schemaPlan(rebuildingTable: true).isEmpty)
            #expect(try SPSyncNoteV2.schemaPlan().isEmpty)
            #expect(try columnNames(fx.db, "sp_sync_note") == ["uuid", "title", "subtitle"])
            #expect(try SPSyncNoteV2.all.pluck(\.$subtitle) == ["h"])
            // The rebuild logged nothing; the new triggers log the next change.
            #expect(try count(fx.db, "SELECT count(*) FROM activeobjects_sync_log") == logged)
            try fx.db.execute("UPDATE sp_sync_note SET subtitle = 'h2'")
            #expect(try fx.db.scalar("SELECT cols FROM activeobjects_sync_log ORDER BY seq DESC LIMIT 1") as String? == "subtitle\u{1F}")
        }
    }

    // MARK: Defaults computed at run time

    @Test func runTimeDefaultsNeverReachTheTablesSQL() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SPStampedV2.createTable()
            let sql = try #require(try fx.db.scalar("SELECT sql FROM sqlite_master WHERE name = 'sp_stamped'") as String?)
            let year = Calendar(identifier: .gregorian).component(.year, from: Date())
            #expect(!sql.contains(String(year)), "\(sql)")
            #expect(try tableInfo(fx.db, "sp_stamped").map(\.description) == [
                "id INTEGER PK", "title TEXT NOT NULL DEFAULT ''", "createdAt TEXT NOT NULL", "token TEXT NOT NULL",
                "label TEXT NOT NULL DEFAULT 'fixed'", "seen TEXT",
            ])
            // Objects still get their own values; a row another tool inserts must name them.
            let a = SPStampedV2(); try a.save()
            Thread.sleep(forTimeInterval: 0.005)
            let b = SPStampedV2(); try b.save()
            #expect(a.token != b.token)
            #expect(try SPStampedV2.countAll() == 2)
            expectDatabaseError(.constraint) { try fx.db.execute("INSERT INTO sp_stamped (title) VALUES ('raw')") }
        }
    }

    @Test func addingANotNullRunTimeDefaultColumnFillsTheRowsAndKeepsNoDefault() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SPStampedV1.createTable()
            for title in ["a", "b", "c"] { let row = SPStampedV1(); row.title = title; try row.save() }
            let plan = try SPStampedV2.schemaPlan()
            #expect(plan.contains { $0.hasPrefix(#"INSERT INTO "_activeobjects_rebuild_sp_stamped""#) }, "\(plan)")
            #expect(try writes(fx) { try SPStampedV2.createTable() } == plan)
            #expect(try SPStampedV2.schemaPlan().isEmpty)
            #expect(try SPStampedV2.schemaPlan(rebuildingTable: true).isEmpty)
            let info = try tableInfo(fx.db, "sp_stamped")
            #expect(info.first { $0.name == "createdAt" }?.description == "createdAt TEXT NOT NULL")
            #expect(info.first { $0.name == "token" }?.description == "token TEXT NOT NULL")
            #expect(info.first { $0.name == "seen" }?.description == "seen TEXT")
            // The rows already there got one value each (a new object's), readable by the model.
            let rows = try SPStampedV2.all.order(by: "id").all()
            #expect(rows.map(\.title) == ["a", "b", "c"])
            #expect(Set(rows.map(\.createdAt)).count == 1)
            #expect(abs(rows[0].createdAt.timeIntervalSinceNow) < 3600)
            #expect(Set(rows.map(\.token)).count == 1)
            #expect(rows.allSatisfy { $0.seen == nil && $0.label == "fixed" })
        }
    }

    @Test func createTableDoesNotRebuildATableWhoseColumnsItWouldDrop() throws {
        let fx = try SchemaFixture()
        try fx.run {
            try SPStampedV1.createTable()
            try fx.db.execute("ALTER TABLE sp_stamped ADD COLUMN legacy TEXT")
            try fx.db.execute("INSERT INTO sp_stamped (title, legacy) VALUES ('a', 'keep me')")
            let before = try databaseDump(fx.db)
            let error = expectActiveObjectError({ try SPStampedV2.createTable() }, matches: \.isInvalidModel)
            if case let .invalidModel(_, reason)? = error {
                #expect(reason.contains("\"legacy\"") && reason.contains("createdAt") && reason.contains("rebuildingTable"), "\(reason)")
            }
            #expect(try databaseDump(fx.db) == before)
            try SPStampedV2.migrate(rebuildingTable: true)
            #expect(try columnNames(fx.db, "sp_stamped") == ["id", "title", "createdAt", "token", "label", "seen"])
        }
    }

    @Test func aFrozenDefaultOfAnEarlierVersionIsRemovedByTheRebuildOnly() throws {
        let fx = try SchemaFixture()
        // The table as the code before schema plans made it: the prototype's values frozen.
        try fx.db.execute("""
            CREATE TABLE sp_stamped (id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '',
            createdAt TEXT NOT NULL DEFAULT '2026-11-25 17:37:21.437',
            token TEXT NOT NULL DEFAULT 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f',
            label TEXT NOT NULL DEFAULT 'fixed', seen TEXT DEFAULT '2026-11-25 17:37:21.437')
            """)
        try fx.db.execute("INSERT INTO sp_stamped (title) VALUES ('a'), ('b')")
        let rows = try rawRows(fx.db, "sp_stamped")
        try fx.run {
            // createTable() leaves a table alone for a default.
            #expect(try SPStampedV2.schemaPlan().isEmpty)
            let plan = try SPStampedV2.schemaPlan(rebuildingTable: true)
            #expect(plan.contains { $0.hasPrefix("DROP TABLE") }, "\(plan)")
            #expect(try writes(fx) { try SPStampedV2.migrate(rebuildingTable: true) } == plan)
            #expect(try SPStampedV2.schemaPlan(rebuildingTable: true).isEmpty)
        }
        #expect(try tableInfo(fx.db, "sp_stamped").map(\.description) == [
            "id INTEGER PK", "title TEXT NOT NULL DEFAULT ''", "createdAt TEXT NOT NULL", "token TEXT NOT NULL",
            "label TEXT NOT NULL DEFAULT 'fixed'", "seen TEXT",
        ])
        #expect(try rawRows(fx.db, "sp_stamped") == rows)
    }
}
