import Foundation
import Testing
@testable import ActiveObjects

/// A TEXT natural key declared optional: refused, since a NULL key names no row.
final class SafetyOptionalKey: ModelTestRecord {
    override class var primaryKey: String { "code" }
    @Column var code: String? = nil
    @Column var label = ""
}

/// An optional INTEGER key: nil asks SQLite for the next number.
final class SafetyTicket: ModelTestRecord {
    override class var primaryKey: String { "number" }
    @Column var number: Int64? = nil
    @Column var title = ""
}

/// The same over a legacy `INT PRIMARY KEY` table, where SQLite numbers nothing.
final class SafetyLegacyTicket: ModelTestRecord {
    override class var tableName: String { "legacy_ticket" }
    override class var primaryKey: String { "number" }
    @Column var number: Int64? = nil
    @Column var title = ""
}

/// A legacy table with an `INT PRIMARY KEY` (not the rowid alias): `code` is a natural key.
final class LegacyCode: ModelTestRecord {
    override class var tableName: String { "legacy_codes" }
    override class var primaryKey: String { "code" }
    @Column var code: Int = 0
    @Column var label = ""
}

/// Keys: `find(ids:)` by rowid whatever the key, `$id` of a table without rowid, optional keys,
/// upserts of join rows, relations of a renamed parent, key columns without DEFAULT, a nil
/// auto-numbered key after a rollback, `find(ids:)` of a table found without rowid.
@Suite struct KeyEdgeCaseTests {
    @Test func findIDsLooksRowsUpByRowidLikeFindID() throws {
        try withModelDB { database in
            try ShopCustomer.createTable()
            for code in ["ALFKI", "BONAP", "CACTU"] {
                let customer = ShopCustomer()
                customer.code = code
                customer.name = code.lowercased()
                try customer.save()
            }
            #expect(try ShopCustomer.find(id: 2)?.code == "BONAP")
            #expect(try ShopCustomer.find(ids: [3, 1, 9]).map(\.code) == ["CACTU", "ALFKI"])
            // A legacy table whose INT key is not the rowid alias.
            try database.execute("CREATE TABLE legacy_codes (code INT PRIMARY KEY, label TEXT NOT NULL DEFAULT '')")
            try database.execute("INSERT INTO legacy_codes (code, label) VALUES (10, 'ten'), (20, 'twenty')")
            #expect(try LegacyCode.find(ids: [2, 1]).map(\.label) == ["twenty", "ten"])
            #expect(try LegacyCode.find(key: 10)?.label == "ten")
            // No rowid, no id: a clear error, as find(id:) gives.
            try ShopStock.createTable()
            #expect(throws: ActiveObjectError.self) { try ShopStock.find(ids: [1]) }
            do {
                _ = try ShopStock.all.pluck(\.$id)
                Issue.record("$id of a WITHOUT ROWID table was accepted")
            } catch ActiveObjectError.invalidArgument(let message) {
                #expect(message.contains("WITHOUT ROWID"), "\(message)")
            }
        }
    }

    @Test func anOptionalTextKeyIsRefused() throws {
        try withModelDB { _ in
            do {
                try SafetyOptionalKey.createTable()
                Issue.record("an optional key column was accepted")
            } catch ActiveObjectError.invalidModel(_, let reason) {
                #expect(reason.contains("\"code\"") && reason.contains("optional"), "\(reason)")
            }
        }
    }

    /// A nil optional INTEGER key used to be inserted (SQLite numbered the row) while the
    /// object kept nil, so its next save looked for a row that did not exist.
    @Test func aNilIntegerKeyTakesTheNumberSQLiteGaveTheRow() throws {
        try withModelDB { database in
            try SafetyTicket.createTable()
            let first = SafetyTicket()
            first.title = "first"
            try first.save()
            #expect(first.number == 1 && first.id == 1 && !first.hasChanges)
            first.title = "first, edited"
            try first.save()                               // an UPDATE of that row
            let byHand = SafetyTicket()
            byHand.number = 10
            byHand.title = "ten"
            try byHand.save()
            let batch = [SafetyTicket(), SafetyTicket()]
            try SafetyTicket.insertAll(batch)
            #expect(batch.map(\.number) == [11, 12] && batch.map(\.id) == [11, 12])
            #expect(try SafetyTicket.find(key: Int64(1))?.title == "first, edited")
            #expect(try SafetyTicket.countAll() == 4)
            // A table whose key is not the rowid alias numbers nothing: refused before writing.
            try database.execute("CREATE TABLE legacy_ticket (number INT PRIMARY KEY, title TEXT NOT NULL DEFAULT '')")
            let legacy = SafetyLegacyTicket()
            #expect(throws: ActiveObjectError.self) { try legacy.save() }
            #expect(throws: ActiveObjectError.self) { try SafetyLegacyTicket.insertAll([SafetyLegacyTicket()]) }
            #expect(try SafetyLegacyTicket.countAll() == 0)
            legacy.number = 5
            try legacy.save()
            #expect(try SafetyLegacyTicket.find(key: Int64(5)) != nil)
        }
    }

    @Test func upsertingAnExistingJoinRowGivesTheObjectThatRowsID() throws {
        try withModelDB { _ in
            try Music.createTables()
            let playlist = MusicPlaylist()
            playlist.name = "Road"
            try playlist.save()
            let track = MusicTrack()
            track.title = "Intro"
            try track.save()
            let link = MusicPlaylistTrack()
            link.playlistId = try #require(playlist.id)
            link.trackId = try #require(track.id)
            try link.save()
            let again = MusicPlaylistTrack()
            again.playlistId = link.playlistId
            again.trackId = link.trackId
            try again.upsert()
            #expect(again.id == link.id && again.id != nil)
            #expect(!again.hasChanges)
            #expect(try MusicPlaylistTrack.countAll() == 1)
        }
    }

    @Test func aRenamedButUnsavedParentKeyStillNamesItsStoredChildren() throws {
        try withModelDB { _ in
            try ShopCustomer.createTable()
            try ShopOrder.createTable()
            let customer = ShopCustomer()
            customer.code = "BONAP"
            try customer.save()
            let order = ShopOrder()
            order.customerCode = "BONAP"
            try order.save()
            customer.code = "BONA2"
            #expect(try customer.orders.count() == 1)
            #expect(try customer.orders.all().map(\.id) == [order.id])
        }
    }

    @Test func keyColumnsHaveNoDefault() throws {
        try withModelDB { database in
            try SafetyToken.createTable()
            let sql: String? = try database.scalar("SELECT sql FROM sqlite_master WHERE name = 'safety_token'")
            let ddl = try #require(sql)
            #expect(ddl.contains("\"token\" TEXT NOT NULL,") || ddl.contains("\"token\" TEXT NOT NULL "), "\(ddl)")
            #expect(!ddl.contains("\"token\" TEXT NOT NULL DEFAULT"), "\(ddl)")
            #expect(ddl.contains("\"owner\" TEXT NOT NULL DEFAULT ''"), "\(ddl)")
        }
    }

    @Test func aNilAutoNumberedKeyIsNilAgainAfterARollback() throws {
        try withModelDB { database in
            try SafetyTicket.createTable()
            let ticket = SafetyTicket()
            ticket.title = "rolled back"
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try database.transaction {
                    try ticket.save()
                    #expect(ticket.number == 1)
                    throw Abort()
                }
            }
            #expect(ticket.number == nil && ticket.id == nil)
            let other = SafetyTicket()
            try other.save()                         // takes number 1
            try ticket.save()                        // the retry is numbered anew
            #expect(other.number == 1 && ticket.number == 2)
            let batch = [SafetyTicket(), SafetyTicket()]
            #expect(throws: Abort.self) {
                try database.transaction {
                    try SafetyTicket.insertAll(batch)
                    throw Abort()
                }
            }
            #expect(batch.allSatisfy { $0.number == nil && $0.id == nil })
        }
    }

    @Test func findIDsOfATableFoundWithoutRowidIsRefused() throws {
        try withModelDB { database in
            try database.execute("CREATE TABLE legacy_codes (code INT PRIMARY KEY, label TEXT NOT NULL DEFAULT '') WITHOUT ROWID")
            #expect(throws: ActiveObjectError.self) { _ = try LegacyCode.find(ids: [1]) }
        }
    }
}
