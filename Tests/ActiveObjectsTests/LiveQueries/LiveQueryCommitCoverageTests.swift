import Foundation
import Testing
@testable import ActiveObjects

/// Every commit that can change a live query's result is followed (API §11, §15), including
/// those the routing of commits by table could miss: a commit to a table the query starts
/// reading during a fetch, a statement that commits part of its work before failing, and a
/// statement whose rows are read before its transaction ends (`RETURNING`). On a file database
/// with the default options.
@Suite struct LiveQueryCommitCoverageTests {
    /// A fetch that reads a table for the first time (the first book of an `including`) while
    /// another thread commits to that table: the result ends fresh.
    @Test func aCommitToATableTheFetchStartsReadingIsNotLost() async throws {
        let trap = StatementTrap()
        var options = Database.Options()
        options.trace = trap.hook
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("new-table.sqlite"), options: options)
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            let author = try synchronously {
                try SnapAuthor.createTable()
                try SnapBook.createTable()
                let author = SnapAuthor()
                author.name = "old"
                try author.save()
                return author
            }
            let probe = LiveProbe(SnapBook.all.order(by: \.$id).including(\.author).values()) { books in
                books.map { (try? $0.author.get()?.name) ?? "-" }
            }
            defer { probe.cancel() }
            #expect(await probe.waitFor(count: 1))
            #expect(probe.elements.last == [])
            // The next fetch reads the books, then (there is one now) their authors for the first
            // time. In between, another thread renames the author: a commit to a table the
            // observation did not read when the commit was routed.
            trap.arm(after: "FROM \"snap_book\"") {
                runOnAnotherThread {
                    try? db.execute("UPDATE snap_author SET name = 'new'")
                }
            }
            try synchronously {
                let book = SnapBook()
                book.title = "first"
                book.authorId = author.id
                try book.save()
            }
            #expect(await probe.waitUntilLast(timeout: 10) { $0 == ["new"] },
                    "the live result stayed \(probe.elements.last ?? []) after the author was renamed")
        }
    }

    /// The same for a many-to-many link: the first link makes the fetch read the join table
    /// and the targets.
    @Test func aCommitToTheTargetsOfAFirstLinkIsNotLost() async throws {
        let trap = StatementTrap()
        var options = Database.Options()
        options.trace = trap.hook
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("new-link.sqlite"), options: options)
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            let (author, tag) = try synchronously {
                try SnapAuthor.createTable()
                try SnapTag.createTable()
                try SnapAuthorTag.createTable()
                let author = SnapAuthor()
                author.name = "a"
                try author.save()
                let tag = SnapTag()
                tag.label = "old"
                try tag.save()
                return (author, tag)
            }
            let probe = LiveProbe(SnapAuthor.all.including(\.tags).values()) { authors in
                authors.flatMap { (try? $0.tags.all().map(\.label)) ?? [] }
            }
            defer { probe.cancel() }
            #expect(await probe.waitFor(count: 1))
            #expect(probe.elements.last == [])
            // The preload's query of the join rows (not `add`'s own check of the link).
            trap.arm(after: "FROM \"snap_author_tag\" WHERE \"authorId\" IN") {
                runOnAnotherThread {
                    try? db.execute("UPDATE snap_tag SET label = 'new'")
                }
            }
            try synchronously { try author.tags.add(tag) }
            #expect(await probe.waitUntilLast(timeout: 10) { $0 == ["new"] },
                    "the live result stayed \(probe.elements.last ?? []) after the tag was renamed")
        }
    }

    /// `OR FAIL`: the statement fails after inserting two rows, which it keeps and commits.
    @Test func aStatementThatFailsAfterCommittingPartOfItsWorkIsACommit() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("fail.sqlite"))
        defer { try? db.close() }
        try synchronously {
            try db.execute("CREATE TABLE kept (x INTEGER UNIQUE ON CONFLICT FAIL)")
            try db.execute("INSERT INTO kept VALUES (1)")
        }
        let probe = LiveProbe(db.values { try db.scalar("SELECT count(*) FROM kept") as Int? }) { $0 ?? -1 }
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        #expect(probe.elements == [1])
        let error = expectDatabaseError(.constraint) { try db.execute("INSERT INTO kept VALUES (2), (3), (1), (4)") }
        #expect(error != nil)
        #expect(db.changes == 2, "the failed statement's kept rows are its changes")
        #expect(try synchronously { try db.scalar("SELECT count(*) FROM kept") as Int? } == 3)
        #expect(await probe.waitUntilLast(timeout: 10) { $0 == 3 }, "live query stayed at \(probe.elements)")
        // A statement that fails without keeping anything (SQLite undid it) is no commit.
        let undone = expectDatabaseError(.constraint) { try db.execute("INSERT OR ABORT INTO kept VALUES (5), (1)") }
        #expect(undone != nil)
        #expect(try synchronously { try db.scalar("SELECT count(*) FROM kept") as Int? } == 3)
        #expect(await probe.staysAt(2, for: 0.3), "a statement that changed nothing emitted: \(probe.elements)")
    }

    /// A statement read for its first row only (`scalar` of `INSERT … RETURNING`) commits when
    /// it is reset: live queries see it, sync and async.
    @Test func anInsertReturningReadThroughScalarIsSeen() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("returning.sqlite"))
        defer { try? db.close() }
        try synchronously { try db.execute("CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT)") }
        let probe = LiveProbe(db.values { try db.scalar("SELECT count(*) FROM note") as Int? }) { $0 ?? -1 }
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        let first: Int64? = try await db.scalar("INSERT INTO note(body) VALUES ('a'), ('b') RETURNING id")
        #expect(first == 1)
        #expect(await probe.waitUntilLast(timeout: 10) { $0 == 2 }, "live query stayed at \(probe.elements)")
        let again: Int64? = try synchronously { try db.scalar("INSERT INTO note(body) VALUES ('c') RETURNING id") }
        #expect(again == 3)
        #expect(await probe.waitUntilLast(timeout: 10) { $0 == 3 }, "live query stayed at \(probe.elements)")
        let made = try await db.rows("INSERT INTO note(body) VALUES ('d') RETURNING id")
        #expect(made.count == 1)
        #expect(await probe.waitUntilLast(timeout: 10) { $0 == 4 }, "live query stayed at \(probe.elements)")
    }
}
