import Foundation
import Testing
@testable import ActiveObjects

final class SafetyPerson: ModelTestRecord {
    @Column var name = ""
    @Column var age = 0
}

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

/// A natural UUID key whose default is a fresh UUID per object.
final class SafetyToken: ModelTestRecord {
    override class var primaryKey: String { "token" }
    @Column var token: UUID = UUID()
    @Column var owner = ""
}

/// Writes that would overwrite or duplicate rows are refused, never run: objects loaded without
/// their key or without some columns, deleted objects whose id another row took, raw SQL that
/// would end a transaction behind its back (issue 11 items 3 and 6; found by the round-2 audit).
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

/// Keys: `find(ids:)` by rowid whatever the key, `$id` of a table without rowid, optional keys,
/// upserts of join rows, relations of a renamed parent, key columns without DEFAULT.
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

    @Test func relationsTakeArgumentsAsAnArray() throws {
        try withModelDB { _ in
            try Music.createTables()
            let playlist = MusicPlaylist()
            playlist.name = "Mix"
            try playlist.save()
            for (title, seconds) in [("a", 100), ("b", 200), ("c", 300)] {
                let track = MusicTrack()
                track.title = title
                track.seconds = seconds
                try playlist.tracks.add(track)
            }
            let album = MusicAlbum()
            let artist = MusicArtist()
            artist.name = "X"
            try artist.save()
            album.artistId = try #require(artist.id)
            album.title = "One"
            try album.save()
            #expect(try artist.albums.where("title = ?", arguments: ["One"]).count() == 1)
            #expect(try playlist.tracks.where("seconds > ?", arguments: [150]).all().map(\.title).sorted() == ["b", "c"])
            #expect(try playlist.tracks.where("seconds < ?", 150).all().map(\.title) == ["a"])
        }
    }
}

/// A legacy table with an `INT PRIMARY KEY` (not the rowid alias): `code` is a natural key.
final class LegacyCode: ModelTestRecord {
    override class var tableName: String { "legacy_codes" }
    override class var primaryKey: String { "code" }
    @Column var code: Int = 0
    @Column var label = ""
}
