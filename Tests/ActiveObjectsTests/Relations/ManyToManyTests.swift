import Foundation
import Testing
@testable import ActiveObjects

/// Many-to-many through a join model (API.md §12): playlists and tracks through
/// `playlist_track` (Int64 keys, composite key), tracks and tags through `track_tags` (an
/// Int64 key and a TEXT key, WITHOUT ROWID).
@Suite struct ManyToManyTests {
    /// Playlists "Jazz" (So What, Freddie, Blue in Green), "Chill" (Blue in Green, Flamenco),
    /// "Empty"; track "Unlisted" in no playlist.
    struct Library {
        let jazz: MusicPlaylist, chill: MusicPlaylist, empty: MusicPlaylist
        let tracks: [String: MusicTrack]
    }

    static func makeLibrary() throws -> Library {
        try Music.createTables()
        var tracks: [String: MusicTrack] = [:]
        for (title, seconds) in [("So What", 562), ("Freddie Freeloader", 589), ("Blue in Green", 337),
                                 ("Flamenco Sketches", 566), ("Unlisted", 100)] {
            tracks[title] = try Music.track(title, seconds: seconds)
        }
        let jazz = try Music.playlist("Jazz"), chill = try Music.playlist("Chill"), empty = try Music.playlist("Empty")
        for title in ["So What", "Freddie Freeloader", "Blue in Green"] { try jazz.tracks.add(tracks[title]!) }
        for title in ["Flamenco Sketches", "Blue in Green"] { try chill.tracks.add(tracks[title]!) }
        return Library(jazz: jazz, chill: chill, empty: empty, tracks: tracks)
    }

    @Test func allCountAndWhereGoThroughTheJoinTable() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { _ in
            let library = try Self.makeLibrary()
            let (tracks, statements) = try recorder.recording { try library.jazz.tracks.all() }
            #expect(tracks.map(\.title) == ["So What", "Freddie Freeloader", "Blue in Green"])   // key order
            #expect(selectStatements(statements).count == 1)
            #expect(selectStatements(statements).first?.contains(
                #"WHERE ("id" IN (SELECT "track_id" FROM "playlist_track" WHERE "playlist_id" = ?))"#) == true, "\(statements)")
            #expect(try library.jazz.tracks.count() == 3)
            #expect(try library.chill.tracks.all().map(\.title) == ["Blue in Green", "Flamenco Sketches"])
            #expect(try library.empty.tracks.all().isEmpty)
            #expect(try library.empty.tracks.count() == 0)
            #expect(try library.jazz.tracks.where(\.$seconds > 500).all().map(\.title) == ["So What", "Freddie Freeloader"])
            #expect(try library.jazz.tracks.where(["title": "Blue in Green"]).count() == 1)
            #expect(try library.jazz.tracks.where(\.$title, .like("F%")).all().count == 1)
            #expect(try library.jazz.tracks.query.order(by: \.$seconds).all().map(\.seconds) == [337, 562, 589])

            // The other side.
            let blue = library.tracks["Blue in Green"]!
            #expect(try blue.playlists.all().map(\.name) == ["Jazz", "Chill"])
            #expect(try library.tracks["Unlisted"]!.playlists.count() == 0)

            // An owner never saved has nothing related, and no SQL runs.
            let draft = MusicPlaylist()
            let (none, noSQL) = try recorder.recording { try draft.tracks.all() }
            #expect(none.isEmpty)
            #expect(noSQL.isEmpty)
            #expect(try draft.tracks.count() == 0)
        }
    }

    @Test func addInsertsTheJoinRowOnce() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            let library = try Self.makeLibrary()
            let unlisted = library.tracks["Unlisted"]!
            let (_, statements) = try recorder.recording { try library.empty.tracks.add(unlisted) }
            #expect(writeStatements(statements) == [#"INSERT INTO "playlist_track" ("playlist_id", "track_id") VALUES (?, ?)"#])
            #expect(try library.empty.tracks.all().map(\.title) == ["Unlisted"])
            // Adding it again changes nothing.
            let (_, again) = try recorder.recording { try library.empty.tracks.add(unlisted) }
            #expect(writeStatements(again).isEmpty)
            #expect(try modelRowCount(db, "playlist_track") == 6)
            #expect(try unlisted.playlists.all().map(\.name) == ["Empty"])
        }
    }

    @Test func addSavesNewSidesFirstInOneTransaction() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Music.createTables()
            let playlist = MusicPlaylist()
            playlist.name = "Road trip"
            let track = MusicTrack()
            track.title = "All Blues"
            let (_, statements) = try recorder.recording { try playlist.tracks.add(track) }
            let writes = writeStatements(statements)
            #expect(writes.count == 3, "\(statements)")
            #expect(writes[0].hasPrefix(#"INSERT INTO "playlists""#))
            #expect(writes[1].hasPrefix(#"INSERT INTO "tracks""#))
            #expect(writes[2].hasPrefix(#"INSERT INTO "playlist_track""#))
            // One transaction around all three.
            let begin = try #require(statements.firstIndex { $0.hasPrefix("BEGIN") })
            let commit = try #require(statements.lastIndex { $0.hasPrefix("COMMIT") })
            let inside = statements[begin...commit]
            #expect(writeStatements(Array(inside)).count == 3)
            #expect(statements.filter { $0.hasPrefix("BEGIN") }.count == 1)

            #expect(playlist.id != nil && track.id != nil)
            #expect(!playlist.hasChanges && !track.hasChanges)
            #expect(try playlist.tracks.all().map(\.title) == ["All Blues"])
            #expect(try track.playlists.all().map(\.name) == ["Road trip"])
            #expect(try db.scalar("SELECT count(*) FROM playlist_track WHERE playlist_id = ? AND track_id = ?",
                                  [try requireID(playlist), try requireID(track)]) == 1)
        }
    }

    @Test func aFailedAddWritesNothingAndLeavesBothObjectsAsTheyWere() throws {
        try withModelDB { db in
            try Music.createTables()
            let playlist = MusicPlaylist()
            playlist.name = "Road trip"
            let untitled = MusicTrack()   // fails validation: no title
            untitled.seconds = 120
            let error = expectActiveObjectError { try playlist.tracks.add(untitled) }
            #expect(error?.isValidationFailed == true)
            #expect(try modelRowCount(db, "playlists") == 0)
            #expect(try modelRowCount(db, "tracks") == 0)
            #expect(try modelRowCount(db, "playlist_track") == 0)
            #expect(playlist.id == nil && untitled.id == nil)
            #expect(playlist.hasChanges)
            #expect(untitled.seconds == 120)

            // Fixed, the same objects go in.
            untitled.title = "All Blues"
            try playlist.tracks.add(untitled)
            #expect(try modelRowCount(db, "playlists") == 1)
            #expect(try playlist.tracks.all().map(\.title) == ["All Blues"])

            // A target whose row is gone: the join row's foreign key fails; the new owner's
            // INSERT is rolled back with it.
            let gone = try Music.track("Gone")
            try db.execute("DELETE FROM tracks WHERE id = ?", [try requireID(gone)])
            let other = MusicPlaylist()
            other.name = "Other"
            #expect(expectDatabaseError { try other.tracks.add(gone) }?.resultCode == .constraint)
            #expect(other.id == nil)
            #expect(try modelRowCount(db, "playlists") == 1)
            #expect(try modelRowCount(db, "playlist_track") == 1)
            // The object is still new: a plain save inserts it.
            try other.save()
            #expect(try modelRowCount(db, "playlists") == 2)
        }
    }

    @Test func removeDeletesOnlyTheJoinRow() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            let library = try Self.makeLibrary()
            let blue = library.tracks["Blue in Green"]!
            let (removed, statements) = try recorder.recording { try library.jazz.tracks.remove(blue) }
            #expect(removed)
            #expect(writeStatements(statements) == [#"DELETE FROM "playlist_track" WHERE "playlist_id" = ? AND "track_id" = ?"#])
            #expect(try library.jazz.tracks.all().map(\.title) == ["So What", "Freddie Freeloader"])
            #expect(try library.chill.tracks.all().map(\.title) == ["Blue in Green", "Flamenco Sketches"])
            #expect(try MusicTrack.find(id: try requireID(blue)) != nil)
            #expect(try modelRowCount(db, "tracks") == 5)
            #expect(try library.jazz.tracks.remove(blue) == false)
            #expect(try library.empty.tracks.remove(blue) == false)
            // A target never saved is related to nothing.
            #expect(try library.jazz.tracks.remove(MusicTrack()) == false)
        }
    }

    @Test func addAndRemoveRefreshAPreloadedRelation() throws {
        try withModelDB { _ in
            let library = try Self.makeLibrary()
            let lists = try MusicPlaylist.all.order(by: "id").including(\.tracks).all()
            let jazz = lists[0]
            #expect(try jazz.tracks.count() == 3)
            try jazz.tracks.add(library.tracks["Unlisted"]!)
            #expect(try jazz.tracks.count() == 4)
            try jazz.tracks.remove(library.tracks["So What"]!)
            #expect(try jazz.tracks.all().map(\.title) == ["Freddie Freeloader", "Blue in Green", "Unlisted"])
        }
    }

    /// `n` playlists and 20 tracks; playlist i holds the tracks j with (i + j) % 3 == 0 or
    /// j == 0 (one track shared by all), added in a shuffled order.
    @Test(arguments: [1, 10, 500])
    func includingLoadsManyToManyInAFixedNumberOfQueries(n: Int) throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Music.createTables()
            var expected: [Int64: [Int64]] = [:]
            try db.transaction {
                var tracks: [MusicTrack] = []
                for j in 0..<20 { tracks.append(try Music.track("T\(j)", seconds: j)) }
                var random = ModelSeededGenerator(seed: UInt64(n))
                for i in 0..<n {
                    let playlist = try Music.playlist("P\(i)")
                    let members = tracks.indices.filter { j in j == 0 || (i + j) % 3 == 0 }
                    for j in members.shuffled(using: &random) { try playlist.tracks.add(tracks[j]) }
                    expected[try requireID(playlist)] = try members.map { try requireID(tracks[$0]) }
                }
            }
            let (lists, statements) = try recorder.recording { try MusicPlaylist.all.including(\.tracks).all() }
            // The playlists, their join rows, their tracks.
            #expect(selectStatements(statements).count == 3, "\(statements)")
            #expect(lists.count == n)
            let (loaded, reads) = try recorder.recording { try lists.map { try $0.tracks.all() } }
            #expect(reads.isEmpty, "reading preloaded tracks ran \(reads.count) statements")
            for (playlist, tracks) in zip(lists, loaded) {
                let id = try requireID(playlist)
                #expect(try tracks.map { try requireID($0) } == expected[id], "playlist \(id)")
                #expect(try playlist.tracks.count() == expected[id]?.count)
            }
            // The same as one query per playlist.
            for playlist in lists.prefix(5) {
                #expect(try playlist.tracks.query.all().map(\.id) == playlist.tracks.all().map(\.id))
            }
            // The other way, over the same join table.
            let (tracks, reverse) = try recorder.recording { try MusicTrack.all.including(\.playlists).all() }
            #expect(selectStatements(reverse).count == 3)
            #expect(try tracks[0].playlists.count() == n)   // T0 is in every playlist
        }
    }

    @Test func manyToManyOverATextKeyAndAWithoutRowIDJoinTable() throws {
        let recorder = SQLRecorder()
        try withModelDB(recorder: recorder) { db in
            try Music.createTables()
            let soWhat = try Music.track("So What")
            let blue = try Music.track("Blue in Green")
            let modal = MusicTag()
            modal.name = "modal"
            // A new tag with a TEXT key: saved first, then the join row.
            try soWhat.tags.add(modal)
            #expect(try MusicTag.find(key: "modal") != nil)
            let jazz = MusicTag()
            jazz.name = "jazz"
            try jazz.save()
            try soWhat.tags.add(jazz)
            try jazz.tracks.add(blue)
            #expect(try soWhat.tags.all().map(\.name) == ["jazz", "modal"])   // TEXT key order
            #expect(try jazz.tracks.all().map(\.title) == ["So What", "Blue in Green"])
            #expect(try modal.tracks.count() == 1)
            #expect(try db.scalar("SELECT count(*) FROM track_tags") == 3)

            let (tags, statements) = try recorder.recording { try MusicTag.all.order(by: "name").including(\.tracks).all() }
            #expect(selectStatements(statements).count == 3)
            #expect(try tags.map { try $0.tracks.all().map(\.title) } == [["So What", "Blue in Green"], ["So What"]])
            let tracks = try MusicTrack.all.order(by: "id").including(\.tags).all()
            #expect(try tracks.map { try $0.tags.all().map(\.name) } == [["jazz", "modal"], ["jazz"]])

            #expect(try jazz.tracks.remove(soWhat))
            #expect(try soWhat.tags.all().map(\.name) == ["modal"])
            #expect(try MusicTag.countAll() == 2)
        }
    }

    @Test func asyncReads() async throws {
        try await withTimeout(30) {
            try await withAsyncModelDB { _ in
                let library = try Self.makeLibrary()
                let tracks = try await library.jazz.tracks.all()
                #expect(tracks.map(\.title) == ["So What", "Freddie Freeloader", "Blue in Green"])
                #expect(try await library.chill.tracks.count() == 2)
                #expect(try await MusicPlaylist().tracks.all().isEmpty)
            }
        }
    }

    /// The join model is only known at run time there: it must be loaded as itself, not as
    /// `ActiveObject` (which threw "the base class is not a model").
    @Test func includingAManyToManyRelationLoadsTheJoinModel() throws {
        try withModelDB { _ in
            try M2MTrack.createTable(); try M2MPlaylist.createTable(); try M2MEntry.createTable()
            let list = M2MPlaylist()
            list.name = "Mix"
            for title in ["b", "a"] {
                let track = M2MTrack()
                track.title = title
                try list.tracks.add(track)
            }
            let empty = M2MPlaylist()
            try empty.save()
            let lists = try M2MPlaylist.all.including(\.tracks).all()
            #expect(try lists.map { try $0.tracks.all().map(\.title) } == [["b", "a"], []])
        }
    }
}

/// A many-to-many relation whose join model is only known at run time
/// (includingAManyToManyRelationLoadsTheJoinModel).
final class M2MTrack: ModelTestRecord {
    @Column var title = ""
}
final class M2MPlaylist: ModelTestRecord {
    @Column var name = ""
    var tracks: HasManyThrough<M2MTrack> { hasMany(through: \M2MEntry.$playlistId, \M2MEntry.$trackId) }
}
final class M2MEntry: ModelTestRecord {
    override class var primaryKeys: [String] { ["playlistId", "trackId"] }
    @Column var playlistId: Int64 = 0
    @Column var trackId: Int64 = 0
}
