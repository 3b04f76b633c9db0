import Foundation
import Testing
@testable import ActiveObjects

// Soft delete everywhere a user reads (API.md §19): every finder, query terminal, count,
// aggregate, relation, eager load and `joining` leaves rows whose `.deletedAt` column is not
// NULL out, unless the query (or the relation) says `withDeleted()` or `onlyDeleted()`; and the
// query-level writes (`delete`, `delete(permanently:)`, `updateAll`) with the column roles.
// Every test runs on a file database with the default options (WAL, readers). Rows are
// soft-deleted with raw SQL here, so that the reads are tested apart from the writes.

// MARK: - Models

/// A post: soft-deleted, stamped, versioned.
final class SDPost: ModelTestRecord {
    override class var tableName: String { "sd_post" }
    @Column var title = ""
    @Column var score = 0
    @Column var category: String? = nil
    @Column(role: .updatedAt) var updatedAt: Date? = nil
    @Column(role: .deletedAt) var deletedAt: Date? = nil
    @Column(role: .lockVersion) var lockVersion: Int = 0

    var comments: HasMany<SDComment> { hasMany(\.$postId) }
    /// The same children, soft-deleted ones included (a relation declared `withDeleted()`).
    var allComments: HasMany<SDComment> { hasMany(\.$postId).withDeleted() }
    var cover: HasOne<SDCover> { hasOne(\.$postId) }
    var anyCover: HasOne<SDCover> { hasOne(\.$postId).withDeleted() }
    var tags: HasManyThrough<SDTag> { hasMany(through: \SDPostTag.$postId, \SDPostTag.$tagId) }
    var allTags: HasManyThrough<SDTag> { hasMany(through: \SDPostTag.$postId, \SDPostTag.$tagId).withDeleted() }
}

/// A comment: soft-deleted, belongs to a post.
final class SDComment: ModelTestRecord {
    override class var tableName: String { "sd_comment" }
    @Column var body = ""
    @Column var postId: Int64? = nil
    @Column(role: .deletedAt) var deletedAt: Date? = nil

    var post: BelongsTo<SDPost> { belongsTo(\.$postId) }
    /// The parent even when it is soft-deleted.
    var anyPost: BelongsTo<SDPost> { belongsTo(\.$postId).withDeleted() }
}

/// A post's cover (has-one): soft-deleted.
final class SDCover: ModelTestRecord {
    override class var tableName: String { "sd_cover" }
    @Column var url = ""
    @Column var postId: Int64? = nil
    @Column(role: .deletedAt) var deletedAt: Date? = nil
}

/// A tag (many-to-many with posts): soft-deleted.
final class SDTag: ModelTestRecord {
    override class var tableName: String { "sd_tag" }
    @Column var name = ""
    @Column(role: .deletedAt) var deletedAt: Date? = nil
    var posts: HasManyThrough<SDPost> { hasMany(through: \SDPostTag.$tagId, \SDPostTag.$postId) }
}

/// The join model: its rows are soft-deleted too (a link removed).
final class SDPostTag: ModelTestRecord {
    override class var tableName: String { "sd_post_tag" }
    override class var primaryKeys: [String] { ["postId", "tagId"] }
    @Column var postId: Int64 = 0
    @Column var tagId: Int64 = 0
    @Column(role: .deletedAt) var deletedAt: Date? = nil
}

/// A model without roles, beside them.
final class SDPlain: ModelTestRecord {
    override class var tableName: String { "sd_plain" }
    @Column var name = ""
    @Column var postId: Int64? = nil
    var post: BelongsTo<SDPost> { belongsTo(\.$postId) }
}

/// A narrow version: `"version" + 1` past 127 is refused.
final class SDTiny: ModelTestRecord {
    override class var tableName: String { "sd_tiny" }
    @Column var title = ""
    @Column(role: .deletedAt) var deletedAt: Date? = nil
    @Column(role: .lockVersion) var version: Int8 = 0
}

// MARK: - Fixture

/// Posts a(1, x), b(2, x), c(3, y), d(4, nil), b and d soft-deleted; comments on a (one of
/// them soft-deleted) and on b; covers of a (soft-deleted) and c; tags: a → red, blue (blue
/// soft-deleted), c → red (the join row soft-deleted), c → green.
struct SDFixture {
    let a: Int64, b: Int64, c: Int64, d: Int64
    let red: Int64, blue: Int64, green: Int64

    /// The date a raw-SQL soft delete writes (the default strategy's text).
    static let deletedText = "2024-01-02 03:04:05.000"
    static let oldText = "2000-01-01 00:00:00.000"

    @discardableResult
    static func make(_ db: Database) throws -> SDFixture {
        func post(_ title: String, _ score: Int, _ category: String?) throws -> Int64 {
            let post = SDPost()
            post.title = title
            post.score = score
            post.category = category
            try post.save()
            return try requireID(post)
        }
        let a = try post("a", 1, "x"), b = try post("b", 2, "x"), c = try post("c", 3, "y"), d = try post("d", 4, nil)
        for (body, postID) in [("a1", a), ("a2", a), ("a3-deleted", a), ("b1", b)] {
            let comment = SDComment()
            comment.body = body
            comment.postId = postID
            try comment.save()
        }
        for (url, postID) in [("a.png", a), ("c.png", c)] {
            let cover = SDCover()
            cover.url = url
            cover.postId = postID
            try cover.save()
        }
        func tag(_ name: String) throws -> Int64 {
            let tag = SDTag()
            tag.name = name
            try tag.save()
            return try requireID(tag)
        }
        let red = try tag("red"), blue = try tag("blue"), green = try tag("green")
        for (postID, tagID) in [(a, red), (a, blue), (c, red), (c, green)] {
            let link = SDPostTag()
            link.postId = postID
            link.tagId = tagID
            try link.save()
        }
        // Soft deletes, by raw SQL.
        try db.execute("UPDATE sd_post SET deletedAt = ? WHERE title IN ('b', 'd')", [deletedText])
        try db.execute("UPDATE sd_comment SET deletedAt = ? WHERE body = 'a3-deleted'", [deletedText])
        try db.execute("UPDATE sd_cover SET deletedAt = ? WHERE url = 'a.png'", [deletedText])
        try db.execute("UPDATE sd_tag SET deletedAt = ? WHERE name = 'blue'", [deletedText])
        try db.execute("UPDATE sd_post_tag SET deletedAt = ? WHERE postId = ? AND tagId = ?", [deletedText, c, red])
        return SDFixture(a: a, b: b, c: c, d: d, red: red, blue: blue, green: green)
    }
}

/// Runs `body` with a fresh file database (WAL, readers: the default options) for the models.
func withSoftDeleteDB<T>(_ body: (Database) throws -> T) throws -> T {
    let folder = try TemporaryDirectory()
    let db = try Database(path: folder.path("soft-delete.sqlite"))
    defer { try? db.close() }
    return try ModelTestDB.$current.withValue(db) {
        for model in [SDPost.self, SDComment.self, SDCover.self, SDTag.self, SDPostTag.self, SDPlain.self, SDTiny.self] as [ActiveObject.Type] {
            try model.createTable()
        }
        return try body(db)
    }
}

/// The async form of ``withSoftDeleteDB(_:)``.
nonisolated(nonsending) func withSoftDeleteDB<T>(_ body: nonisolated(nonsending) (Database) async throws -> T) async throws -> T {
    let folder = try TemporaryDirectory()
    let db = try Database(path: folder.path("soft-delete.sqlite"))
    defer { try? db.close() }
    return try await ModelTestDB.$current.withValue(db) {
        for model in [SDPost.self, SDComment.self, SDCover.self, SDTag.self, SDPostTag.self, SDPlain.self, SDTiny.self] as [ActiveObject.Type] {
            try model.createTable()
        }
        return try await body(db)
    }
}

private func titles(_ posts: [SDPost]) -> [String] { posts.map(\.title) }

// MARK: - Reads

@Suite struct SoftDeleteReadTests {
    @Test func theDatabaseIsAFileWithReaders() throws {
        try withSoftDeleteDB { db in
            let mode: String? = try db.scalar("PRAGMA journal_mode")
            #expect(mode == "wal")
        }
    }

    @Test func findByIDLeavesSoftDeletedRowsOut() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            #expect(try SDPost.find(id: f.a)?.title == "a")
            #expect(try SDPost.find(id: f.b) == nil)
            #expect(try SDPost.all.withDeleted().where(\.$id == f.b).first()?.title == "b")
        }
    }

    @Test func findIDsLeavesSoftDeletedRowsOut() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            #expect(try titles(SDPost.find(ids: [f.d, f.c, f.b, f.a])) == ["c", "a"])
        }
    }

    @Test func findAllLeavesSoftDeletedRowsOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            #expect(try titles(SDPost.findAll()) == ["a", "c"])
        }
    }

    @Test func findWhereLeavesSoftDeletedRowsOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            #expect(try titles(SDPost.find(where: ["category": "x"])) == ["a"])
            #expect(try SDPost.find(where: ["category": nil]).isEmpty)
        }
    }

    @Test func findFirstLeavesSoftDeletedRowsOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            #expect(try SDPost.findFirst(where: ["title": "b"]) == nil)
            #expect(try SDPost.findFirst(where: ["category": "x"])?.title == "a")
        }
    }

    @Test func findByKeyLeavesSoftDeletedRowsOut() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            #expect(try SDPost.find(key: f.a)?.title == "a")
            #expect(try SDPost.find(key: f.b) == nil)
            #expect(try SDPost.find(key: ["id": f.b]) == nil)
            // A composite key: the join model's soft-deleted row.
            #expect(try SDPostTag.find(key: ["postId": f.c, "tagId": f.green]) != nil)
            #expect(try SDPostTag.find(key: ["postId": f.c, "tagId": f.red]) == nil)
        }
    }

    @Test func countsLeaveSoftDeletedRowsOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            #expect(try SDPost.countAll() == 2)
            #expect(try SDPost.count(where: ["category": "x"]) == 1)
            #expect(try SDPost.all.count() == 2)
            #expect(try SDPost.all.limit(10).count() == 2)
            #expect(try SDPost.all.count(\.$category) == 2)
            #expect(try SDPost.all.withDeleted().count() == 4)
            #expect(try SDPost.all.withDeleted().count(\.$category) == 3)
            #expect(try SDPost.all.onlyDeleted().count() == 2)
            #expect(try SDPost.withDeleted().count() == 4)
            #expect(try SDPost.onlyDeleted().count() == 2)
        }
    }

    @Test func queryTerminalsLeaveSoftDeletedRowsOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            let all = SDPost.all.order(by: \.$score)
            #expect(try titles(all.all()) == ["a", "c"])
            #expect(try SDPost.all.order(by: \.$score, .descending).first()?.title == "c")
            #expect(try SDPost.all.first()?.title == "a")
            #expect(try SDPost.where(\.$title == "b").first() == nil)
            #expect(try SDPost.where(\.$title == "b").exists() == false)
            #expect(try SDPost.where(\.$title == "a").exists())
            #expect(try titles(all.page(1, size: 1)) == ["a"])
            #expect(try titles(all.page(2, size: 1)) == ["c"])
            #expect(try all.page(3, size: 1).isEmpty)
            #expect(try all.pluck(\.$title) == ["a", "c"])
            #expect(try SDPost.all.distinct().pluck(\.$category).sorted { ($0 ?? "") < ($1 ?? "") } == ["x", "y"])
            #expect(try SDPost.all.distinct().count(\.$category) == 2)
            #expect(try all.offset(1).all().map(\.title) == ["c"])

            #expect(try titles(all.withDeleted().all()) == ["a", "b", "c", "d"])
            #expect(try titles(all.onlyDeleted().all()) == ["b", "d"])
            #expect(try SDPost.where(\.$title == "b").withDeleted().exists())
            #expect(try all.onlyDeleted().pluck(\.$title) == ["b", "d"])
            #expect(try titles(all.withDeleted().page(2, size: 3)) == ["d"])
            // The last scope wins.
            #expect(try titles(all.onlyDeleted().withDeleted().all()) == ["a", "b", "c", "d"])
            #expect(try titles(all.withDeleted().onlyDeleted().all()) == ["b", "d"])
        }
    }

    @Test func eachAndCursorLeaveSoftDeletedRowsOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            var walked: [String] = []
            try SDPost.all.order(by: \.$score).each { walked.append($0.title) }
            #expect(walked == ["a", "c"])
            walked = []
            try SDPost.all.order(by: \.$score).onlyDeleted().each { walked.append($0.title) }
            #expect(walked == ["b", "d"])

            let cursor = try SDPost.all.order(by: \.$score).cursor()
            var pulled: [String] = []
            while let post = try cursor.next() { pulled.append(post.title) }
            #expect(pulled == ["a", "c"])
            let everything = try SDPost.all.order(by: \.$score).withDeleted().cursor()
            pulled = []
            while let post = try everything.next() { pulled.append(post.title) }
            #expect(pulled == ["a", "b", "c", "d"])
            // With `including` (batches, relations of each batch).
            let withComments = try SDPost.all.order(by: \.$score).including(\.comments).cursor()
            pulled = []
            while let post = try withComments.next() { pulled.append("\(post.title):\(try post.comments.count())") }
            #expect(pulled == ["a:2", "c:0"])
        }
    }

    @Test func aggregatesLeaveSoftDeletedRowsOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            #expect(try SDPost.all.sum(\.$score) == 4)
            #expect(try SDPost.all.min(\.$score) == 1)
            #expect(try SDPost.all.max(\.$score) == 3)
            #expect(try SDPost.all.average(\.$score) == 2)
            #expect(try SDPost.all.withDeleted().sum(\.$score) == 10)
            #expect(try SDPost.all.withDeleted().max(\.$score) == 4)
            #expect(try SDPost.all.onlyDeleted().average(\.$score) == 3)
            #expect(try SDPost.all.limit(5).sum(\.$score) == 4)
        }
    }

    @Test func groupByLeavesSoftDeletedRowsOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            #expect(try SDPost.all.group(by: \.$category).count() == ["x": 1, "y": 1])
            #expect(try SDPost.all.group(by: \.$category).sum(\.$score) == ["x": 1, "y": 3])
            #expect(try SDPost.all.withDeleted().group(by: \.$category).count() == ["x": 2, "y": 1, nil: 1])
            #expect(try SDPost.all.onlyDeleted().group(by: \.$category).max(\.$score) == ["x": 2, nil: 4])
        }
    }

    @Test func scopesOfAModelWithoutADeletedAtColumn() throws {
        try withSoftDeleteDB { _ in
            let plain = SDPlain()
            plain.name = "p"
            try plain.save()
            // withDeleted(): every row is read anyway.
            #expect(try SDPlain.all.withDeleted().count() == 1)
            #expect(try SDPlain.withDeleted().all().map(\.name) == ["p"])
            // onlyDeleted(): a mistake, refused when the query runs.
            let error = expectActiveObjectError { _ = try SDPlain.all.onlyDeleted().all() }
            if case .invalidArgument(let message)? = error {
                #expect(message.contains("SDPlain") && message.contains("deletedAt"))
            } else {
                Issue.record("expected invalidArgument, got \(String(describing: error))")
            }
            _ = expectActiveObjectError { _ = try SDPlain.onlyDeleted().count() }
            // Its SQL has no soft-delete condition.
            #expect(try SDPlain.all.compile().whereClause.isEmpty)
            #expect(try SDPost.all.compile().whereClause == #" WHERE "deletedAt" IS NULL"#)
            #expect(try SDPost.all.withDeleted().compile().whereClause.isEmpty)
        }
    }

    @Test func rawSQLIsNotFiltered() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            #expect(try SDPost.fetch(sql: "SELECT * FROM sd_post ORDER BY score").map(\.title) == ["a", "b", "c", "d"])
        }
    }

    // MARK: Relations

    @Test func belongsToLeavesASoftDeletedParentOutUnlessWithDeleted() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            let b1 = try #require(try SDComment.findFirst(where: ["body": "b1"]))
            let a1 = try #require(try SDComment.findFirst(where: ["body": "a1"]))
            #expect(try b1.post.get() == nil)
            #expect(try b1.post.withDeleted().get()?.id == f.b)
            #expect(try b1.post.onlyDeleted().get()?.id == f.b)
            #expect(try b1.anyPost.get()?.id == f.b)
            #expect(try a1.post.get()?.id == f.a)
            #expect(try a1.post.onlyDeleted().get() == nil)
            // A parent of a model without roles, too.
            let plain = SDPlain()
            plain.postId = f.d
            try plain.save()
            #expect(try plain.post.get() == nil)
            #expect(try plain.post.withDeleted().get()?.title == "d")
        }
    }

    @Test func hasManyLeavesSoftDeletedChildrenOutUnlessWithDeleted() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            let a = try #require(try SDPost.find(id: f.a))
            #expect(try a.comments.all().map(\.body) == ["a1", "a2"])
            #expect(try a.comments.count() == 2)
            #expect(try a.comments.where(\.$body, .like("a%")).count() == 2)
            #expect(try a.comments.query.count() == 2)
            #expect(try a.comments.withDeleted().all().map(\.body) == ["a1", "a2", "a3-deleted"])
            #expect(try a.comments.withDeleted().count() == 3)
            #expect(try a.comments.withDeleted().where(\.$body == "a3-deleted").count() == 1)
            #expect(try a.comments.onlyDeleted().all().map(\.body) == ["a3-deleted"])
            #expect(try a.allComments.all().count == 3)
        }
    }

    @Test func hasOneLeavesASoftDeletedChildOutUnlessWithDeleted() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            let a = try #require(try SDPost.find(id: f.a))
            let c = try #require(try SDPost.find(id: f.c))
            #expect(try a.cover.get() == nil)
            #expect(try a.cover.withDeleted().get()?.url == "a.png")
            #expect(try a.anyCover.get()?.url == "a.png")
            #expect(try c.cover.get()?.url == "c.png")
            #expect(try c.cover.onlyDeleted().get() == nil)
        }
    }

    @Test func hasManyThroughLeavesSoftDeletedTargetsAndJoinRowsOut() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            let a = try #require(try SDPost.find(id: f.a))
            let c = try #require(try SDPost.find(id: f.c))
            // a → red, blue (blue soft-deleted).
            #expect(try a.tags.all().map(\.name) == ["red"])
            #expect(try a.tags.count() == 1)
            #expect(try a.tags.withDeleted().all().map(\.name) == ["red", "blue"])
            #expect(try a.tags.onlyDeleted().all().map(\.name) == ["blue"])
            #expect(try a.allTags.count() == 2)
            // c → red (join row soft-deleted), green: the link removed relates nothing, whatever the scope.
            #expect(try c.tags.all().map(\.name) == ["green"])
            #expect(try c.tags.withDeleted().all().map(\.name) == ["green"])
            // The other side.
            let red = try #require(try SDTag.find(id: f.red))
            #expect(try red.posts.all().map(\.title) == ["a"])
        }
    }

    @Test func hasManyThroughRemoveSoftDeletesTheJoinRowAndAddRestoresIt() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            let c = try #require(try SDPost.find(id: f.c))
            let green = try #require(try SDTag.find(id: f.green))
            let red = try #require(try SDTag.find(id: f.red))
            #expect(try c.tags.remove(green))
            #expect(try c.tags.all().isEmpty)
            #expect(try modelRowCount(db, "sd_post_tag") == 4)           // kept, soft-deleted
            #expect(try c.tags.remove(green) == false)                   // already removed
            try c.tags.add(red)                                          // restores the soft-deleted row
            #expect(try c.tags.all().map(\.name) == ["red"])
            #expect(try modelRowCount(db, "sd_post_tag") == 4)
            try c.tags.add(red)                                          // already related: nothing
            #expect(try c.tags.count() == 1)
        }
    }

    @Test func relationsOfASoftDeletedParentLoadWhenAskedWithDeleted() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            let b = try #require(try SDPost.all.withDeleted().where(\.$id == f.b).first())
            #expect(try b.comments.all().map(\.body) == ["b1"])
            #expect(try b.comments.count() == 1)
            // Its eager loads.
            let loaded = try SDPost.all.withDeleted().order(by: \.$score).including(\.comments).including(\.cover)
                .including(\.tags).all()
            #expect(loaded.map(\.title) == ["a", "b", "c", "d"])
            #expect(try loaded.map { try $0.comments.all().map(\.body) } == [["a1", "a2"], ["b1"], [], []])
            #expect(try loaded.map { try $0.cover.get()?.url } == [nil, nil, "c.png", nil])
            #expect(try loaded.map { try $0.tags.all().map(\.name) } == [["red"], [], ["green"], []])
            // Its joining.
            #expect(try titles(SDPost.all.withDeleted().joining(\.comments).order(by: \.$score).all()) == ["a", "b"])
            #expect(try titles(SDPost.all.withDeleted().joining(\.comments, where: \.$body == "b1").all()) == ["b"])
            #expect(try titles(SDPost.all.onlyDeleted().joining(\.comments).all()) == ["b"])
        }
    }

    // MARK: Eager loading

    @Test func eagerLoadingHasManyLeavesSoftDeletedChildrenOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            let posts = try SDPost.all.including(\.comments).including(\.allComments).all()
            #expect(posts.map(\.title) == ["a", "c"])
            #expect(try posts[0].comments.all().map(\.body) == ["a1", "a2"])
            #expect(try posts[0].allComments.all().map(\.body) == ["a1", "a2", "a3-deleted"])
            #expect(try posts[1].comments.all().isEmpty)
            // Preloaded: no SQL (the relation is read from the object).
            #expect(posts[0].preloadedRelations?.count == 2)
            // A scope asked at the call is not the preloaded one: read with SQL.
            #expect(try posts[0].comments.withDeleted().count() == 3)
        }
    }

    @Test func eagerLoadingBelongsToGivesNilForASoftDeletedParent() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            let comments = try SDComment.all.withDeleted().including(\.post).including(\.anyPost).all()
            #expect(comments.map(\.body) == ["a1", "a2", "a3-deleted", "b1"])
            #expect(try comments.map { try $0.post.get()?.id } == [f.a, f.a, f.a, nil])
            #expect(try comments.map { try $0.anyPost.get()?.id } == [f.a, f.a, f.a, f.b])
        }
    }

    @Test func eagerLoadingHasOneLeavesASoftDeletedChildOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            let posts = try SDPost.all.including(\.cover).including(\.anyCover).all()
            #expect(try posts.map { try $0.cover.get()?.url } == [nil, "c.png"])
            #expect(try posts.map { try $0.anyCover.get()?.url } == ["a.png", "c.png"])
        }
    }

    @Test func eagerLoadingHasManyThroughLeavesSoftDeletedTargetsAndJoinRowsOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            let posts = try SDPost.all.including(\.tags).including(\.allTags).all()
            #expect(try posts.map { try $0.tags.all().map(\.name) } == [["red"], ["green"]])
            #expect(try posts.map { try $0.allTags.all().map(\.name) } == [["red", "blue"], ["green"]])
            let tags = try SDTag.all.withDeleted().including(\.posts).all()
            #expect(try tags.map { try $0.posts.all().map(\.title) } == [["a"], ["a"], ["c"]])
        }
    }

    // MARK: joining

    @Test func joiningABelongsToLeavesSoftDeletedParentsOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            // b1's post is soft-deleted: it does not match.
            #expect(try SDComment.all.joining(\.post).all().map(\.body) == ["a1", "a2"])
            #expect(try SDComment.all.withDeleted().joining(\.post).all().map(\.body) == ["a1", "a2", "a3-deleted"])
            #expect(try SDComment.all.joining(\.anyPost, where: \.$title == "b").all().map(\.body) == ["b1"])
            #expect(try SDComment.all.joining(\.post, where: \.$title == "b").count() == 0)
        }
    }

    @Test func joiningAHasManyLeavesSoftDeletedChildrenOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            #expect(try titles(SDPost.all.joining(\.comments, where: \.$body == "a3-deleted").all()).isEmpty)
            #expect(try titles(SDPost.all.joining(\.allComments, where: \.$body == "a3-deleted").all()) == ["a"])
            #expect(try titles(SDPost.all.joining(\.comments).all()) == ["a"])
        }
    }

    @Test func joiningAHasOneLeavesASoftDeletedChildOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            #expect(try titles(SDPost.all.joining(\.cover).all()) == ["c"])
            #expect(try titles(SDPost.all.joining(\.anyCover, where: \.$url == "a.png").all()) == ["a"])
        }
    }

    @Test func joiningAHasManyThroughLeavesSoftDeletedTargetsAndJoinRowsOut() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            #expect(try titles(SDPost.all.joining(\.tags, where: \.$name == "blue").all()).isEmpty)
            #expect(try titles(SDPost.all.joining(\.allTags, where: \.$name == "blue").all()) == ["a"])
            // c → red's join row is soft-deleted: only a.
            #expect(try titles(SDPost.all.joining(\.tags, where: \.$name == "red").all()) == ["a"])
            #expect(try titles(SDPost.all.joining(\.allTags, where: \.$name == "red").all()) == ["a"])
            #expect(try SDTag.all.withDeleted().joining(\.posts).all().map(\.name) == ["red", "blue", "green"])
        }
    }

    // MARK: Async forms

    @Test func asyncFindersQueriesAndRelationsLeaveSoftDeletedRowsOut() async throws {
        try await withSoftDeleteDB { db in
            let f = try synchronously { try SDFixture.make(db) }
            let missing = try await SDPost.find(id: f.b)
            #expect(missing == nil)
            let found = try await SDPost.find(ids: [f.a, f.b])
            #expect(found.map(\.title) == ["a"])
            #expect(try await SDPost.findAll().map(\.title) == ["a", "c"])
            #expect(try await SDPost.find(where: ["category": "x"]).map(\.title) == ["a"])
            #expect(try await SDPost.findFirst(where: ["title": "d"]) == nil)
            #expect(try await SDPost.find(key: f.d) == nil)
            #expect(try await SDPost.find(key: ["id": f.a])?.title == "a")
            #expect(try await SDPost.countAll() == 2)
            #expect(try await SDPost.count(where: ["category": "x"]) == 1)
            #expect(try await SDPost.all.withDeleted().all().count == 4)
            #expect(try await SDPost.all.onlyDeleted().first()?.title == "b")
            #expect(try await SDPost.all.count() == 2)
            #expect(try await SDPost.all.onlyDeleted().exists())
            #expect(try await SDPost.all.page(1, size: 10).count == 2)
            #expect(try await SDPost.all.pluck(\.$title) == ["a", "c"])
            #expect(try await SDPost.all.sum(\.$score) == 4)
            #expect(try await SDPost.all.withDeleted().max(\.$score) == 4)
            #expect(try await SDPost.all.count(\.$category) == 2)
            #expect(try await SDPost.all.group(by: \.$category).count() == ["x": 1, "y": 1])

            let comment = try #require(try await SDComment.findFirst(where: ["body": "b1"]))
            #expect(try await comment.post.get() == nil)
            #expect(try await comment.post.withDeleted().get()?.title == "b")
            let post = try #require(try await SDPost.find(id: f.a))
            #expect(try await post.comments.all().count == 2)
            #expect(try await post.comments.withDeleted().count() == 3)
            #expect(try await post.cover.get() == nil)
            #expect(try await post.tags.all().map(\.name) == ["red"])
            #expect(try await post.tags.withDeleted().count() == 2)
        }
    }
}

// MARK: - Query-level writes

@Suite struct SoftDeleteQueryWriteTests {
    /// The raw values of a post's role columns.
    static func roles(_ db: Database, _ id: Int64) throws -> (deletedAt: String?, updatedAt: String?, lockVersion: Int) {
        let row = try #require(try db.rows("SELECT deletedAt, updatedAt, lockVersion FROM sd_post WHERE id = ?", [id]).first)
        return (try row["deletedAt"], try row["updatedAt"], try row["lockVersion"])
    }

    /// Puts every post's `updatedAt` at an old date and `lockVersion` at 5.
    static func age(_ db: Database) throws {
        try db.execute("UPDATE sd_post SET updatedAt = ?, lockVersion = 5", [SDFixture.oldText])
    }

    @Test func deleteWhereSoftDeletesStampsAndCountsVersions() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            try Self.age(db)
            let before = Date().addingTimeInterval(-1)
            #expect(try SDPost.delete(where: ["title": "a"]) == 1)
            let a = try Self.roles(db, f.a)
            #expect(a.deletedAt != nil)
            #expect(a.updatedAt == a.deletedAt)
            #expect(a.lockVersion == 6)
            let deletedAt = try #require(try SDPost.all.withDeleted().where(\.$id == f.a).first()?.deletedAt)
            #expect(deletedAt > before && deletedAt < Date().addingTimeInterval(1))
            #expect(try modelRowCount(db, "sd_post") == 4)
            #expect(try titles(SDPost.findAll()) == ["c"])
            // Rows already soft-deleted keep their date and version.
            #expect(try SDPost.delete(where: ["title": ["a", "b"]]) == 0)
            #expect(try Self.roles(db, f.b).deletedAt == SDFixture.deletedText)
            #expect(try Self.roles(db, f.b).lockVersion == 5)
            #expect(try Self.roles(db, f.a).lockVersion == 6)
        }
    }

    @Test func deleteAllAndQueryDeleteSoftDelete() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            try Self.age(db)
            // With an order and a limit: the rows the query selects.
            #expect(try SDPost.all.order(by: \.$score, .descending).limit(1).delete() == 1)
            #expect(try Self.roles(db, f.c).deletedAt != nil)
            #expect(try Self.roles(db, f.c).lockVersion == 6)
            #expect(try titles(SDPost.findAll()) == ["a"])
            // onlyDeleted(): nothing left to mark.
            #expect(try SDPost.all.onlyDeleted().delete() == 0)
            // withDeleted(): marks those not deleted yet.
            #expect(try SDPost.all.withDeleted().delete() == 1)
            #expect(try SDPost.deleteAll() == 0)
            #expect(try SDPost.countAll() == 0)
            #expect(try modelRowCount(db, "sd_post") == 4)
            #expect(try Self.roles(db, f.b).deletedAt == SDFixture.deletedText)
        }
    }

    @Test func deleteInsideWithoutTimestampsKeepsUpdatedAt() throws {
        try withSoftDeleteDB { db in
            let f = try SDFixture.make(db)
            try Self.age(db)
            _ = try ActiveObject.withoutTimestamps { try SDPost.delete(where: ["title": "a"]) }
            let a = try Self.roles(db, f.a)
            #expect(a.deletedAt != nil)                    // the delete itself is dated
            #expect(a.updatedAt == SDFixture.oldText)
            #expect(a.lockVersion == 6)
        }
    }

    @Test func permanentDeletesOfAQueryFollowItsScopeAndClassLevelOnesIncludeTheBin() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            // A query: the rows it reads, the visible ones.
            #expect(try SDPost.where(["category": "x"]).delete(permanently: true) == 1)   // a; b is in the bin
            #expect(try modelRowCount(db, "sd_post") == 3)
            // Class level: every matching row, the bin included.
            #expect(try SDPost.delete(where: ["category": "x"], permanently: true) == 1)   // b
            #expect(try SDPost.all.withDeleted().pluck(\.$title) == ["c", "d"])
            // The bin, purged.
            #expect(try SDPost.all.onlyDeleted().delete(permanently: true) == 1)
            #expect(try SDPost.all.withDeleted().pluck(\.$title) == ["c"])
            // permanently: false is the soft delete.
            #expect(try SDPost.all.delete(permanently: false) == 1)
            #expect(try modelRowCount(db, "sd_post") == 1)
            #expect(try SDPost.all.delete(permanently: true) == 0)                  // visible: none
            #expect(try SDPost.deleteAll(permanently: true) == 1)                   // everything
            #expect(try modelRowCount(db, "sd_post") == 0)
        }
    }

    @Test func deleteAllPermanentlyEmptiesTheTable() throws {
        try withSoftDeleteDB { db in
            try SDFixture.make(db)
            #expect(try SDPost.deleteAll(permanently: true) == 4)
            #expect(try modelRowCount(db, "sd_post") == 0)
        }
    }

    @Test func asyncQueryLevelWrites() async throws {
        try await withSoftDeleteDB { db in
            let f = try synchronously { try SDFixture.make(db) }
            try synchronously { try Self.age(db) }
            #expect(try await SDPost.delete(where: ["title": "a"]) == 1)
            #expect(try synchronously { try Self.roles(db, f.a) }.lockVersion == 6)
            #expect(try await SDPost.all.count() == 1)
            // The withoutTimestamps scope of the caller's task reaches the writer thread.
            _ = try await ActiveObject.withoutTimestamps { try await SDPost.where(\.$title == "c").delete() }
            let c = try synchronously { try Self.roles(db, f.c) }
            #expect(c.deletedAt != nil && c.updatedAt == SDFixture.oldText)
            #expect(try await SDPost.deleteAll() == 0)
            #expect(try await SDPost.delete(where: ["title": "b"], permanently: true) == 1)   // from the bin
            #expect(try await SDPost.all.onlyDeleted().delete(permanently: true) == 3)
            #expect(try synchronously { try modelRowCount(db, "sd_post") } == 0)
            #expect(try await SDPost.deleteAll(permanently: true) == 0)
            let plain = SDPlain()
            plain.name = "p"
            try await plain.save()
            #expect(try await SDPlain.all.delete(permanently: false) == 1)
            #expect(try await SDPost.where(\.$title == "x").updateAll(["score": 1]) == 0)
        }
    }
}
