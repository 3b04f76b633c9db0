import Foundation
import Testing
@testable import ActiveObjects

/// API.md §19: `HasManyThrough.add` inserts the join row through the join model's own insert,
/// so a `.createdAt` / `.updatedAt` join column is stamped with the current date — not 1970, not
/// the date the table was created — whether the table was made by `createTable()` or by a
/// schema with `DEFAULT CURRENT_TIMESTAMP` (the model `activeobjects-gen` writes for it).
@Suite struct JoinRowTimestampTests {
    /// Within a few seconds of now.
    private func isNow(_ date: Date?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let distance = date.map { abs($0.timeIntervalSinceNow) } ?? .infinity
        #expect(distance < 10, "\(what): \(date.map { "\($0)" } ?? "nil") is not now", sourceLocation: sourceLocation)
    }

    /// The join rows' stored dates, read with SQL.
    private func storedDates(_ db: Database, table: String, column: String) throws -> [Date?] {
        try db.rows("SELECT \(column) AS date FROM \(table) ORDER BY rowid").map { try $0["date"] as Date? }
    }

    @Test("a join model with an optional .createdAt, its table made by createTable(): add stamps the join row")
    func optionalCreatedAtFromCreateTable() throws {
        try withModelDB { db in
            try JoinStampPlaylist.createTable()
            try JoinStampSong.createTable()
            try JoinStampEntry.createTable()
            let playlist = JoinStampPlaylist()
            playlist.name = "Road"
            let song = JoinStampSong()
            song.title = "Drive"
            try playlist.songs.add(song)
            #expect(try playlist.songs.all().map(\.title) == ["Drive"])
            let entry = try #require(try JoinStampEntry.findAll().first)
            isNow(entry.createdAt, "the join model's createdAt")
            isNow(entry.updatedAt, "the join model's updatedAt")
            let stored = try storedDates(db, table: "join_stamp_entries", column: "created_at")
            #expect(stored.count == 1)
            isNow(stored.first ?? nil, "join_stamp_entries.created_at")
        }
    }

    @Test("a generated-style join model over a table with created_at DEFAULT CURRENT_TIMESTAMP: add stamps the current date")
    func generatedJoinModelOverAnExistingSchema() throws {
        try withModelDB { db in
            // The schema of an existing file (not made by createTable()).
            try db.execute("CREATE TABLE join_stamp_playlists (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '')")
            try db.execute("CREATE TABLE join_stamp_songs (id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '')")
            try db.execute("""
                CREATE TABLE playlist_songs (
                    playlist_id INTEGER NOT NULL REFERENCES join_stamp_playlists(id) ON DELETE CASCADE,
                    song_id INTEGER NOT NULL REFERENCES join_stamp_songs(id) ON DELETE CASCADE,
                    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
                    PRIMARY KEY (playlist_id, song_id))
                """)
            let playlist = JoinStampPlaylist()
            playlist.name = "Night"
            try playlist.save()
            var songs: [JoinStampSong] = []
            for title in ["One", "Two"] {
                let song = JoinStampSong()
                song.title = title
                songs.append(song)
            }
            for song in songs { try playlist.generatedSongs.add(song) }
            #expect(try playlist.generatedSongs.all().map(\.title) == ["One", "Two"])
            let stored = try storedDates(db, table: "playlist_songs", column: "created_at")
            #expect(stored.count == 2)
            for date in stored { isNow(date, "playlist_songs.created_at") }
            for row in try GeneratedPlaylistSong.findAll() { isNow(row.createdAt, "GeneratedPlaylistSong.createdAt") }
            #expect(try db.scalar("SELECT count(*) FROM playlist_songs WHERE created_at LIKE '1970%'") as Int? == 0)

            // Adding again changes nothing, not even the stamp.
            let before = try storedDates(db, table: "playlist_songs", column: "created_at")
            try playlist.generatedSongs.add(songs[0])
            #expect(try storedDates(db, table: "playlist_songs", column: "created_at") == before)
        }
    }
}

final class JoinStampPlaylist: ModelTestRecord {
    override class var tableName: String { "join_stamp_playlists" }
    @Column var name = ""
    var songs: HasManyThrough<JoinStampSong> { hasMany(through: \JoinStampEntry.$playlistId, \JoinStampEntry.$songId) }
    var generatedSongs: HasManyThrough<JoinStampSong> {
        hasMany(through: \GeneratedPlaylistSong.$playlistId, \GeneratedPlaylistSong.$songId)
    }
}

final class JoinStampSong: ModelTestRecord {
    override class var tableName: String { "join_stamp_songs" }
    @Column var title = ""
}

/// A hand-written join model: optional timestamps, made by `createTable()`.
final class JoinStampEntry: ModelTestRecord {
    override class var tableName: String { "join_stamp_entries" }
    override class var columnNaming: ColumnNaming { .snakeCase }
    override class var primaryKeys: [String] { ["playlist_id", "song_id"] }
    @Column(references: JoinStampPlaylist.self, onDelete: .cascade) var playlistId: Int64 = 0
    @Column(references: JoinStampSong.self, onDelete: .cascade) var songId: Int64 = 0
    @Column(role: .createdAt) var createdAt: Date? = nil
    @Column(role: .updatedAt) var updatedAt: Date? = nil
}

/// The join model `activeobjects-gen` writes for `playlist_songs (playlist_id, song_id,
/// created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP)`.
final class GeneratedPlaylistSong: ModelTestRecord {
    override class var tableName: String { "playlist_songs" }
    override class var primaryKeys: [String] { ["playlist_id", "song_id"] }

    @Column("playlist_id", references: JoinStampPlaylist.self, onDelete: .cascade) var playlistId: Int64 = 0
    @Column("song_id", references: JoinStampSong.self, onDelete: .cascade) var songId: Int64 = 0
    @Column("created_at", role: .createdAt) var createdAt: Date = Date()
}
