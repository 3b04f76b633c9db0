import Foundation
import Testing
@testable import ActiveObjects

/// A natural-key model that does not declare `WITHOUT ROWID`, for tables another tool made.
final class LegacyStock: ModelTestRecord {
    override class var tableName: String { "legacy_stock" }
    override class var primaryKey: String { "sku" }
    @Column var sku: String = ""
    @Column("on_hand") var onHand: Int = 0
}

/// A composite-key model that does not declare `WITHOUT ROWID`.
final class LegacyPrice: ModelTestRecord {
    override class var tableName: String { "legacy_prices" }
    override class var primaryKeys: [String] { ["sku", "currency"] }
    @Column var sku: String = ""
    @Column var currency: String = ""
    @Column var cents: Int = 0
}

/// `WITHOUT ROWID` tables (API.md §12): declared by the model, or found in a file another tool
/// wrote. Their rows have no rowid, so `id` is nil and `find(id:)` refuses clearly.
@Suite struct WithoutRowIDTests {
    @Test func aDeclaredWithoutRowIDTableIsCreatedSo() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try ShopStock.createTable()
            let create = try #require(recorder.statements.first { $0.hasPrefix("CREATE TABLE") })
            #expect(create == #"CREATE TABLE IF NOT EXISTS "stock" ("sku" TEXT NOT NULL, "on_hand" INTEGER NOT NULL DEFAULT 0, PRIMARY KEY ("sku")) WITHOUT ROWID"#)
            #expect(try isWithoutRowID(db, "stock"))
            try Music.createTables()
            #expect(try isWithoutRowID(db, "track_tags"))
            #expect(try storedKeyColumns(db, "track_tags") == ["track_id", "tag_name"])
            #expect(try !isWithoutRowID(db, "playlist_track"))
        }
    }

    @Test func rowsOfADeclaredWithoutRowIDTableHaveNoID() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try ShopStock.createTable()
            let chai = ShopStock()
            chai.sku = "CHAI"
            chai.onHand = 39
            try chai.save()
            #expect(chai.id == nil)
            #expect(!chai.hasChanges)
            let chang = ShopStock()
            chang.sku = "CHANG"
            try chang.save()

            let found = try #require(try ShopStock.find(key: "CHAI"))
            #expect(found.id == nil)
            #expect(found.onHand == 39)
            // The SELECTs never name a rowid.
            #expect(recorder.statements.allSatisfy { !$0.lowercased().contains("\"rowid\"") }, "\(recorder.statements)")

            found.onHand = 38
            let (_, update) = try recorder.recording { try found.save() }
            #expect(writeStatements(update) == [#"UPDATE "stock" SET "on_hand" = ? WHERE "sku" = ?"#])
            #expect(try ShopStock.find(key: "CHAI")?.onHand == 38)

            // find(id:) has no rowid to look up.
            let error = expectActiveObjectError { _ = try ShopStock.find(id: 1) }
            guard case .invalidArgument(let reason)? = error else {
                Issue.record("expected invalidArgument, got \(String(describing: error))"); return
            }
            #expect(reason.contains("WITHOUT ROWID") && reason.contains("find(key:)"), "\(reason)")

            // Rename, upsert, reload, delete: all by key.
            found.sku = "CHAI-2"
            try found.save()
            #expect(try ShopStock.find(key: "CHAI") == nil)
            let incoming = ShopStock()
            incoming.sku = "CHANG"
            incoming.onHand = 17
            try incoming.upsert()
            #expect(incoming.id == nil)
            #expect(try ShopStock.find(key: "CHANG")?.onHand == 17)
            try chang.reload()
            #expect(chang.onHand == 17)
            #expect(try ShopStock.findAll().map(\.sku) == ["CHAI-2", "CHANG"])
            #expect(try ShopStock.where(\.$onHand > 20).all().map(\.sku) == ["CHAI-2"])
            #expect(try chang.delete())
            #expect(try modelRowCount(db, "stock") == 1)
        }
    }

    @Test func aCompositeWithoutRowIDTableWorksThroughEveryFinder() throws {
        try withModelDB { db in
            try Music.createTables()
            let track = try Music.track("So What")
            let other = try Music.track("Blue in Green")
            for name in ["jazz", "modal", "cool"] {
                let tag = MusicTag()
                tag.name = name
                try tag.save()
            }
            for (trackID, name) in [(track.id, "jazz"), (track.id, "modal"), (other.id, "jazz")] {
                let tag = MusicTrackTag()
                tag.trackId = try #require(trackID)
                tag.tagName = name
                try tag.save()
                #expect(tag.id == nil)
            }
            let trackID = try requireID(track)
            let found = try #require(try MusicTrackTag.find(key: ["track_id": trackID, "tag_name": "modal"]))
            #expect(found.id == nil)
            #expect(try MusicTrackTag.find(key: ["track_id": trackID, "tag_name": "bebop"]) == nil)
            #expect(try MusicTrackTag.where(["tag_name": "jazz"]).count() == 2)
            #expect(try MusicTrackTag.where(["tag_name": "jazz"]).order(by: "track_id").all().map(\.trackId)
                    == [trackID, try requireID(other)])
            // findAll() and first() order by the class's `primaryKey`, "id" for a composite
            // key: the rowid, which a WITHOUT ROWID table does not have (the fix belongs in
            // Query.orderedByKeyIfUnordered and findAll, the lead's files).
            let all = try MusicTrackTag.findAll()
            #expect(all.map(\.tagName) == ["jazz", "modal", "jazz"])
            let first = try MusicTrackTag.findFirst(where: ["tag_name": "jazz"])
            #expect(first?.trackId == trackID)
            found.tagName = "cool"
            try found.save()
            #expect(try db.scalar("SELECT count(*) FROM track_tags WHERE tag_name = 'cool'") == 1)
            #expect(try found.delete())
            #expect(try modelRowCount(db, "track_tags") == 2)
        }
    }

    @Test func aWithoutRowIDTableFoundInAFileWorksWithAModelThatDoesNotDeclareIt() throws {
        let recorder = SQLRecorder()
        try withModelFileDB(recorder: recorder) { db, _ in
            // Another tool made these tables.
            try db.execute(#"CREATE TABLE legacy_stock (sku TEXT PRIMARY KEY, on_hand INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID"#)
            try db.execute(#"INSERT INTO legacy_stock VALUES ('CHAI', 39), ('CHANG', 17)"#)
            try db.execute("""
                CREATE TABLE legacy_prices (sku TEXT NOT NULL, currency TEXT NOT NULL, cents INTEGER NOT NULL,
                PRIMARY KEY (sku, currency)) WITHOUT ROWID
                """)
            try db.execute(#"INSERT INTO legacy_prices VALUES ('CHAI', 'EUR', 1800), ('CHAI', 'USD', 1950)"#)
            #expect(!LegacyStock.withoutRowID)

            // createTable/migrate leave the table as it is.
            try LegacyStock.migrate()
            try LegacyPrice.createTable()
            #expect(try isWithoutRowID(db, "legacy_stock"))

            let chai = try #require(try LegacyStock.find(key: "CHAI"))
            #expect(chai.id == nil)
            #expect(chai.onHand == 39)
            #expect(try LegacyStock.findAll().map(\.sku) == ["CHAI", "CHANG"])
            chai.onHand = 40
            try chai.save()
            let fresh = LegacyStock()
            fresh.sku = "IKURA"
            fresh.onHand = 31
            try fresh.save()
            #expect(fresh.id == nil)
            let upserted = LegacyStock()
            upserted.sku = "CHANG"
            upserted.onHand = 0
            try upserted.upsert()
            #expect(try db.rows("SELECT sku, on_hand FROM legacy_stock ORDER BY sku").map { "\(try $0[0] as String)=\(try $0[1] as Int)" }
                    == ["CHAI=40", "CHANG=0", "IKURA=31"])
            #expect(expectActiveObjectError { _ = try LegacyStock.find(id: 1) } != nil)
            try fresh.reload()
            #expect(try fresh.delete())

            let usd = try #require(try LegacyPrice.find(key: ["sku": "CHAI", "currency": "USD"]))
            #expect(usd.cents == 1950)
            #expect(usd.id == nil)
            usd.currency = "CAD"
            try usd.save()
            #expect(try LegacyPrice.all.order(by: "currency").all().map(\.currency) == ["CAD", "EUR"])
            let all = try LegacyPrice.findAll()
            #expect(all.map(\.currency) == ["CAD", "EUR"])
            // No statement names a rowid the table does not have.
            #expect(recorder.statements.filter { $0.contains("legacy") && $0.lowercased().contains("\"rowid\"") }.isEmpty,
                    "\(recorder.statements)")
        }
    }

    @Test func aDeclaredWithoutRowIDModelNeedsDeclaredKeyColumns() throws {
        final class NoKeyColumn: ModelTestRecord {
            override class var withoutRowID: Bool { true }
            @Column var name: String = ""
        }
        try withModelDB { _ in
            let error = expectActiveObjectError { try NoKeyColumn.createTable() }
            #expect(error?.isInvalidModel == true)
            #expect("\(error.map { "\($0)" } ?? "")".contains("WITHOUT ROWID"))
        }
    }

    /// A table dropped and recreated WITHOUT ROWID through raw SQL is noticed (its rowid is gone).
    @Test func aTableRecreatedWithAnotherLayoutIsLookedAtAgain() throws {
        try withModelFileDB { db, _ in
            try RelaidOut.createTable()
            let row = RelaidOut()
            row.a = 1; row.b = 2; row.note = "x"
            try row.save()
            #expect(try RelaidOut.findAll().first?.id != nil)
            try db.execute("DROP TABLE relaid_out")
            try db.execute("CREATE TABLE relaid_out (a INTEGER NOT NULL, b INTEGER NOT NULL, note TEXT NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID")
            try db.execute("INSERT INTO relaid_out VALUES (3, 4, 'y')")
            let found = try RelaidOut.findAll()
            #expect(found.map(\.note) == ["y"])
            #expect(found.first?.id == nil)
        }
    }
}

/// A composite-key table that raw SQL recreates WITHOUT ROWID (aTableRecreatedWithAnotherLayoutIsLookedAtAgain).
final class RelaidOut: ModelTestRecord {
    override class var primaryKeys: [String] { ["a", "b"] }
    @Column var a = 0
    @Column var b = 0
    @Column var note = ""
}
