import Foundation
import Testing
@testable import ActiveObjects

// Soft delete in live queries and live results (API.md §19, §11, §17): a row soft-deleted by
// an UPDATE leaves the result, a row restored enters it again — by this database's commits
// (whose changed rows a live result reads alone) and by another connection's. The models and
// fixture are SoftDeleteReadTests'; the database is a file with the default options.

/// The path of a database's main file.
private func filePath(of db: Database) throws -> String {
    try #require(try db.rows("PRAGMA database_list").first)["file"]
}

@Suite struct SoftDeleteLiveTests {
    @Test func valuesLeaveASoftDeletedRowOutAndTakeARestoredOneBack() async throws {
        try await withSoftDeleteDB { db in
            let f = try synchronously { try SDFixture.make(db) }
            let probe = LiveProbe(SDPost.all.order(by: \.$score).values()) { $0.map(\.title) }
            defer { probe.cancel() }
            let bin = LiveProbe(SDPost.all.onlyDeleted().order(by: \.$score).values()) { $0.map(\.title) }
            defer { bin.cancel() }
            #expect(await probe.waitFor(count: 1))
            #expect(probe.elements.first == ["a", "c"])
            #expect(await bin.waitUntilLast { $0 == ["b", "d"] })

            try await SDPost.delete(where: ["title": "a"])                 // soft: an UPDATE
            #expect(await probe.waitUntilLast { $0 == ["c"] }, "\(probe.elements)")
            #expect(await bin.waitUntilLast { $0 == ["a", "b", "d"] }, "\(bin.elements)")

            try await db.execute("UPDATE sd_post SET deletedAt = NULL WHERE id = ?", [f.a])   // restored by raw SQL
            #expect(await probe.waitUntilLast { $0 == ["a", "c"] }, "\(probe.elements)")
            #expect(await bin.waitUntilLast { $0 == ["b", "d"] }, "\(bin.elements)")

            // By another connection to the file.
            let other = try Database(path: try filePath(of: db))
            defer { try? other.close() }
            try await other.execute("UPDATE sd_post SET deletedAt = ? WHERE id = ?", [SDFixture.deletedText, f.c])
            #expect(await probe.waitUntilLast { $0 == ["a"] }, "\(probe.elements)")
            try await other.execute("UPDATE sd_post SET deletedAt = NULL WHERE id IN (?, ?)", [f.b, f.c])
            #expect(await probe.waitUntilLast { $0 == ["a", "b", "c"] }, "\(probe.elements)")
        }
    }

    @Test func valuesWithIncludingLeaveSoftDeletedRelatedRowsOut() async throws {
        try await withSoftDeleteDB { db in
            _ = try synchronously { try SDFixture.make(db) }
            let probe = LiveProbe(SDPost.all.order(by: \.$score).including(\.comments).values()) { posts in
                posts.map { post in "\(post.title):\((try? post.comments.all().map(\.body).joined(separator: ",")) ?? "?")" }
            }
            defer { probe.cancel() }
            #expect(await probe.waitUntilLast { $0 == ["a:a1,a2", "c:"] }, "\(probe.elements)")
            try await SDComment.delete(where: ["body": "a2"])
            #expect(await probe.waitUntilLast { $0 == ["a:a1", "c:"] }, "\(probe.elements)")
            try await db.execute("UPDATE sd_comment SET deletedAt = NULL")
            #expect(await probe.waitUntilLast { $0 == ["a:a1,a2,a3-deleted", "c:"] }, "\(probe.elements)")
        }
    }

    @Test func changesDropASoftDeletedObjectAndBringItBackOnRestore() async throws {
        try await withSoftDeleteDB { db in
            let f = try synchronously { try SDFixture.make(db) }
            try await withTimeout(60) {
                var changes = SDPost.all.order(by: \.$score).changes().makeAsyncIterator()
                let first = try #require(try await changes.next(isolation: #isolation))
                #expect(first.elements.map(\.title) == ["a", "c"])
                let a = first.elements[0], c = first.elements[1]
                let observation = try #require(changes.observation)

                // A first commit (the update hook may not be installed yet): c is updated in place.
                try await SDPost.where(\.$title == "c").updateAll(["score": 30])
                let warm = try #require(try await changes.next(isolation: #isolation))
                #expect(warm.elements.map(\.title) == ["a", "c"])
                #expect(warm.updated.count == 1 && warm.updated[0] === c)
                let before = observation.readCounts

                // Soft-deleted by this database: the changed row alone is read, and it leaves.
                try await SDPost.delete(where: ["title": "a"])
                let second = try #require(try await changes.next(isolation: #isolation))
                #expect(second.elements.map(\.title) == ["c"])
                #expect(second.elements[0] === c)
                #expect(second.difference.removals.count == 1 && second.difference.insertions.isEmpty)
                if case .remove(_, let removed, _)? = second.difference.removals.first { #expect(removed === a) }
                let after = observation.readCounts
                #expect(after.changedRows == before.changedRows + 1, "\(before) → \(after)")
                #expect(after.keys == before.keys, "\(before) → \(after)")

                // Restored by raw SQL: it enters again (a new object).
                try await db.execute("UPDATE sd_post SET deletedAt = NULL WHERE id = ?", [f.a])
                let third = try #require(try await changes.next(isolation: #isolation))
                #expect(third.elements.map(\.title) == ["a", "c"])
                #expect(third.elements[1] === c)
                #expect(third.difference.insertions.count == 1 && third.difference.removals.isEmpty)
                #expect(third.elements[0].deletedAt == nil)

                // Soft-deleted by another connection: it leaves too; restored, it comes back.
                let other = try Database(path: try filePath(of: db))
                defer { try? other.close() }
                try await other.execute("UPDATE sd_post SET deletedAt = ? WHERE id = ?", [SDFixture.deletedText, f.c])
                let fourth = try #require(try await changes.next(isolation: #isolation))
                #expect(fourth.elements.map(\.title) == ["a"])
                try await other.execute("UPDATE sd_post SET deletedAt = NULL WHERE id = ?", [f.c])
                let fifth = try #require(try await changes.next(isolation: #isolation))
                #expect(fifth.elements.map(\.title) == ["a", "c"])
            }
        }
    }

    @Test func changesOfTheBinAndOfEveryRow() async throws {
        try await withSoftDeleteDB { db in
            let f = try synchronously { try SDFixture.make(db) }
            try await withTimeout(60) {
                var bin = SDPost.all.onlyDeleted().order(by: \.$score).changes().makeAsyncIterator()
                var every = SDPost.all.withDeleted().order(by: \.$score).changes().makeAsyncIterator()
                #expect(try await bin.next(isolation: #isolation)?.elements.map(\.title) == ["b", "d"])
                let all = try #require(try await every.next(isolation: #isolation))
                #expect(all.elements.map(\.title) == ["a", "b", "c", "d"])

                try await SDPost.delete(where: ["title": "c"])
                #expect(try await bin.next(isolation: #isolation)?.elements.map(\.title) == ["b", "c", "d"])
                // Every row stays; c is updated in place (its deletedAt, updatedAt, lockVersion).
                let changed = try #require(try await every.next(isolation: #isolation))
                #expect(changed.elements.map(\.title) == ["a", "b", "c", "d"])
                #expect(changed.updated.map(\.title) == ["c"] && changed.updated[0] === all.elements[2])
                #expect(all.elements[2].deletedAt != nil)

                try await SDPost.all.onlyDeleted().delete(permanently: true)
                #expect(try await bin.next(isolation: #isolation)?.elements.isEmpty == true)
                #expect(try await every.next(isolation: #isolation)?.elements.map(\.id) == [f.a])
            }
        }
    }

    @MainActor
    @Test func liveResultsDropASoftDeletedObjectAndBringItBack() async throws {
        try await withSoftDeleteDB { db in
            let f = try synchronously { try SDFixture.make(db) }
            let results = SDPost.all.order(by: \.$score).liveResults()
            defer { results.cancel() }
            #expect(await eventually { results.isLoaded })
            #expect(results.elements.map(\.title) == ["a", "c"])
            let c = results.elements[1]
            try await SDPost.delete(where: ["id": f.a])
            #expect(await eventually { results.elements.map(\.title) == ["c"] })
            #expect(results.elements[0] === c)
            try await db.execute("UPDATE sd_post SET deletedAt = NULL WHERE id = ?", [f.a])
            #expect(await eventually { results.elements.map(\.title) == ["a", "c"] })
            #expect(results.elements[1] === c)
            #expect(results.error == nil)
        }
    }
}
