import Foundation
import Testing
@testable import ActiveObjects

final class NilArgNote: ModelTestRecord {
    @Column var title = ""
    @Column var rating: Int? = nil
}

/// SQL arguments in every form that takes them (the unlabeled arrays, `arguments:`, the
/// variadic fragments, sync and async), a literal `nil` among them being SQL NULL.
@Suite struct SQLArgumentTests {
    @Test func aNilArgumentIsBoundAsNull() throws {
        try withModelDB { db in
            try NilArgNote.createTable()
            try db.execute("INSERT INTO nil_arg_note (title, rating) VALUES (?, ?)", ["a", nil])
            try db.execute("INSERT INTO nil_arg_note (title, rating) VALUES (?, ?)", arguments: ["b", nil])
            try db.execute("INSERT INTO nil_arg_note (title, rating) VALUES (?, ?)", ["c", 5])
            let unrated: Int? = nil
            try db.execute("INSERT INTO nil_arg_note (title, rating) VALUES (?, ?)", ["d", unrated])
            #expect(try db.scalar("SELECT count(*) FROM nil_arg_note WHERE rating IS NULL") == 3)
            #expect(try db.scalar("SELECT count(*) FROM nil_arg_note WHERE rating IS ?", [nil]) == 3)
            #expect(try db.scalar("SELECT count(*) FROM nil_arg_note WHERE rating IS ?", arguments: [nil]) == 3)
            #expect(try db.rows("SELECT title FROM nil_arg_note WHERE rating IS ? ORDER BY id", [nil])
                .map { try $0["title"] as String } == ["a", "b", "d"])
            #expect(try db.rows("SELECT title FROM nil_arg_note WHERE rating IS ? ORDER BY id", arguments: [nil]).count == 3)

            // Model queries: variadic, `arguments:`, `fetch(sql:)`, predicates, relations' forms.
            #expect(try NilArgNote.where("rating IS ?", nil).count() == 3)
            #expect(try NilArgNote.where("rating IS ? AND title = ?", nil, "b").all().map(\.title) == ["b"])
            #expect(try NilArgNote.where("rating IS ?", arguments: [nil]).count() == 3)
            #expect(try NilArgNote.all.where("rating IS NOT ?", nil).all().map(\.title) == ["c"])
            #expect(try NilArgNote.fetch(sql: "SELECT * FROM nil_arg_note WHERE rating IS ?", [nil]).count == 3)
            #expect(try NilArgNote.fetch(sql: "SELECT * FROM nil_arg_note WHERE rating IS ?", arguments: [nil]).count == 3)
            #expect(try NilArgNote.where(QueryPredicate(sql: "rating IS ?", nil)).count() == 3)
            #expect(try NilArgNote.where(QueryPredicate(sql: "rating IS ?", arguments: [nil])).count() == 3)
            let stored = try NilArgNote.findAll().filter { $0.rating == nil }.map(\.title)
            #expect(stored == ["a", "b", "d"])
        }
    }

    @Test func aNilArgumentIsBoundAsNullInTheAsyncForms() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("nil.sqlite"))
        defer { try? db.close() }
        try await db.execute("CREATE TABLE t (x INTEGER, y TEXT)")
        try await db.execute("INSERT INTO t VALUES (?, ?)", [1, nil])
        try await db.execute("INSERT INTO t VALUES (?, ?)", arguments: [nil, "y"])
        #expect(try await db.scalar("SELECT count(*) FROM t WHERE y IS ?", [nil]) == 1)
        #expect(try await db.scalar("SELECT count(*) FROM t WHERE x IS ?", arguments: [nil]) == 1)
        #expect(try await db.rows("SELECT x FROM t WHERE y IS ?", [nil]).count == 1)
        #expect(try await db.rows("SELECT y FROM t WHERE x IS ?", arguments: [nil]).count == 1)
    }

    @Test func argumentsFormsEverywhereSQLIsTaken() throws {
        try withModelDB { db in
            try PolishPerson.seed()
            #expect(try PolishPerson.where("age >= ?", arguments: [30]).count() == 2)
            #expect(try PolishPerson.all.where("age < ?", arguments: [20]).pluck(\.$name) == ["Dee"])
            try db.execute("UPDATE polish_person SET age = ? WHERE id = ?", arguments: [31, 1])
            #expect(try db.rows("SELECT name FROM polish_person WHERE age = ?", arguments: [31]).count == 1)
            let n: Int? = try db.scalar("SELECT count(*) FROM polish_person WHERE age > ?", arguments: [30])
            #expect(n == 2)
            #expect(try PolishPerson.fetch(sql: "SELECT * FROM polish_person WHERE age > ?", arguments: [40]).map(\.name) == ["Bob"])
            #expect(try PolishPerson.where(QueryPredicate(sql: "age = ?", arguments: [25])).count() == 1)
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
