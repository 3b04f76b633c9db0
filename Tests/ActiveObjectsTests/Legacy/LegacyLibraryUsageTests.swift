import Foundation
import Testing
@testable import ActiveObjects

/// The usage patterns of the libraries ActiveObjects replaces.
@Suite struct LegacyLibraryUsageTests {
    // MARK: OCActiveObjects

    /// OCActiveObjects' sample Person, in its table `persons`, dates as unix seconds.
    final class Person: ModelTestRecord {
        override class var tableName: String { "persons" }
        override class var dateStrategy: DateStrategy? { .unixSeconds }
        @Column var name = ""
        @Column var age: Int16 = 0
        @Column var rank: Int32 = 0
        @Column var votes: Int = 0
        @Column var sex = ""
        @Column var income: Double = 0
        @Column var active = false
        @Column var flags = 0
        @Column var rating: Double? = nil
        @Column var birthdate: Date? = nil
    }

    @Test func ocActiveObjectsPersonRoundTripUpdateFindCountRemove() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Person.createTable()
            let joe = Person()
            joe.name = "Joe"; joe.age = 42; joe.rank = -3; joe.votes = 1_000_000; joe.sex = "M"
            joe.income = 12_345.67; joe.active = true; joe.flags = 0b1010; joe.rating = 4.5
            joe.birthdate = Date(timeIntervalSince1970: 315_532_800)
            try joe.save()
            let id = try requireID(joe)

            let loaded = try #require(try Person.find(id: id))
            #expect(loaded.name == "Joe" && loaded.age == 42 && loaded.rank == -3 && loaded.votes == 1_000_000)
            #expect(loaded.sex == "M" && loaded.income == 12_345.67 && loaded.active && loaded.flags == 10)
            #expect(loaded.rating == 4.5 && loaded.birthdate == Date(timeIntervalSince1970: 315_532_800))
            let stored = try db.rows("SELECT typeof(birthdate), birthdate FROM persons")
            #expect(try stored[0][0] as String == "real", "the model's .unixSeconds strategy")
            #expect(try stored[0][1] as Double == 315_532_800)

            // Update keeps one row.
            loaded.votes += 1
            try loaded.save()
            joe.name = "Joseph"
            try joe.save()
            #expect(try modelRowCount(db, "persons") == 1)
            let again = try #require(try Person.find(id: id))
            #expect(again.votes == 1_000_001 && again.name == "Joseph")

            let ann = Person(); ann.name = "Ann"; ann.age = 30; ann.sex = "F"; ann.active = true
            let bob = Person(); bob.name = "Bob"; bob.age = 30; bob.sex = "M"
            try ann.save(); try bob.save()
            #expect(try Person.findAll().map(\.name) == ["Joseph", "Ann", "Bob"])
            #expect(try Person.count(where: ["age": 30]) == 2)
            #expect(try Person.count(where: ["sex": "M", "active": true]) == 1)
            #expect(try Person.find(where: ["birthdate": nil]).map(\.name) == ["Ann", "Bob"])

            #expect(try bob.delete())
            #expect(try Person.countAll() == 2)
            #expect(try Person.find(id: try requireID(ann))?.name == "Ann")
            #expect(recorder.statements.allSatisfy { !$0.contains("\"person\"") }, "only the persons table is used")
        }
    }

    // MARK: ObjCMiniORM

    final class Contact: ModelTestRecord {
        override class var primaryKey: String { "contactid" }
        @Column var name = ""
        @Column var phone: String? = nil
        @Column var email: String? = nil
    }

    @Test func objcMiniORMConventionsAndRawSQL() throws {
        try withModelDB { db in
            // The table as ObjCMiniORM created it.
            try db.execute("CREATE TABLE contact (contactid INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, phone TEXT, email TEXT)")
            try db.execute("INSERT INTO contact (name, phone) VALUES ('Ann', '555-1'), ('Bob', NULL), ('Cid', '555-3')")
            #expect(Contact.tableName == "contact")
            try Contact.createTable()   // nothing to add

            let withPhone = try Contact.fetch(sql: "SELECT * FROM contact WHERE phone IS NOT NULL ORDER BY name")
            #expect(withPhone.map(\.name) == ["Ann", "Cid"])
            #expect(withPhone.map(\.id) == [1, 3])
            let like = try Contact.fetch(sql: "SELECT contactid, name FROM contact WHERE name LIKE ?", ["b%"])
            #expect(like.count == 1 && like[0].id == 2 && like[0].phone == nil)

            let dan = Contact(); dan.name = "Dan"; dan.email = "dan@example.com"
            try dan.save()
            #expect(dan.id == 4)
            let bob = try #require(like.first)
            bob.phone = "555-2"
            try bob.save()
            #expect(try db.scalar("SELECT phone FROM contact WHERE contactid = 2") == "555-2")
            #expect(try Contact.find(where: ["contactid": [1, 2]]).count == 2)
            #expect(try Contact.findFirst(where: ["email": "dan@example.com"])?.id == 4)
        }
    }

    // MARK: FMPersisting

    final class Album: ModelTestRecord {
        override class var columnNaming: ColumnNaming { .upperSnakeCase }
        override class var dateStrategy: DateStrategy? { .unixSeconds }
        @Column var title = ""
        @Column var artistID = 0
        @Column var lastPlayedDate: Date? = nil
        @Column var coverArt = Data()
        @Column var trackCount: Int16 = 0
    }

    @Test func fmPersistingAlbumWithUpperSnakeCaseColumnsAndABlob() throws {
        try withModelDB { db in
            try Album.createTable()
            #expect(try modelTableColumns(db, "album") == ["id", "TITLE", "ARTIST_ID", "LAST_PLAYED_DATE", "COVER_ART", "TRACK_COUNT"])
            var bytes = [UInt8](repeating: 0, count: 4096)
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 31) }
            let album = Album(); album.title = "Blue"; album.artistID = 12; album.coverArt = Data(bytes)
            album.lastPlayedDate = Date(timeIntervalSince1970: 1_600_000_000); album.trackCount = 10
            try album.save()
            let empty = Album(); empty.title = "Silence"
            try empty.save()

            let loaded = try #require(try Album.findFirst(where: ["ARTIST_ID": 12]))
            #expect(loaded.coverArt == Data(bytes))
            #expect(loaded.lastPlayedDate == Date(timeIntervalSince1970: 1_600_000_000))
            #expect(try Album.find(id: try requireID(empty))?.coverArt == Data())
            let blobType: String? = try db.scalar("SELECT typeof(COVER_ART) FROM album WHERE TITLE = 'Silence'")
            #expect(blobType == "blob")
            #expect(try Album.where(\.$trackCount > 5).pluck(\.$title) == ["Blue"])
            loaded.coverArt = Data([1, 2, 3])
            #expect(loaded.changedColumns == ["COVER_ART"])
            try loaded.save()
            #expect(try Album.find(id: try requireID(loaded))?.coverArt == Data([1, 2, 3]))
        }
    }

    // MARK: Two classes saved alternately

    final class Artist: ModelTestRecord {
        @Column var name = ""
    }

    final class Track: ModelTestRecord {
        @Column var title = ""
        @Column(references: Artist.self, onDelete: .cascade) var artistId: Int64? = nil
    }

    @Test func twoModelClassesSavedAlternatelyEachRowInItsOwnTable() throws {
        try withModelDB { db in
            try Artist.createTable()
            try Track.createTable()
            for index in 1...5 {
                let artist = Artist(); artist.name = "artist \(index)"
                try artist.save()
                let track = Track(); track.title = "track \(index)"; track.artistId = artist.id
                try track.save()
                #expect(artist.id == Int64(index) && track.id == Int64(index))
            }
            #expect(try modelRowCount(db, "artist") == 5)
            #expect(try modelRowCount(db, "track") == 5)
            #expect(try Artist.findAll().map(\.name) == (1...5).map { "artist \($0)" })
            #expect(try Track.findAll().map(\.title) == (1...5).map { "track \($0)" })
            #expect(try db.scalar("SELECT count(*) FROM artist WHERE name LIKE 'track%'") == 0)
            #expect(try db.scalar("SELECT count(*) FROM track WHERE title LIKE 'artist%'") == 0)
            #expect(try Artist.find(id: 2)?.delete() == true)
            #expect(try Track.countAll() == 4, "the cascade removed artist 2's track")
        }
    }
}
