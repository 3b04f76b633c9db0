import Foundation
import Testing
@testable import ActiveObjects

// A search's live results (§17 over §20): objects kept in place, rows entering and leaving the
// search as their words change, in rank order.

let searchLiveDatabase = LockedValue<Database?>(nil)

final class LiveSearchDoc: ActiveObject {
    override class var database: Database? { searchLiveDatabase.withLock { $0 } }
    @Column var text = ""
    override class var searchableColumns: [String] { ["text"] }
}

@Suite(.serialized)
struct SearchLiveResultsTests {
    @Test func changesOfASearchKeepTheirObjects() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("live-search.sqlite"))
        searchLiveDatabase.withLock { $0 = db }
        defer {
            try? db.close()
            searchLiveDatabase.withLock { $0 = nil }
        }
        try LiveSearchDoc.createTable()
        try await withTimeout(60) { @MainActor in
            for text in ["apple pie", "apple apple apple", "banana"] {
                let doc = LiveSearchDoc()
                doc.text = text
                try await doc.save()
            }
            var changes = LiveSearchDoc.search("apple").changes().makeAsyncIterator()
            let first = try #require(try await changes.next())
            // Best match first: the row that says "apple" three times.
            #expect(first.elements.map(\.text) == ["apple apple apple", "apple pie"])
            let pie = first.elements[1]

            // A row enters when it gains the word (raw SQL: the triggers index it).
            try await db.execute("UPDATE live_search_doc SET text = 'banana apple' WHERE text = 'banana'")
            var next = try #require(try await changes.next())
            #expect(Set(next.elements.map(\.text)) == ["apple apple apple", "apple pie", "banana apple"])
            #expect(next.elements.contains { $0 === pie })

            // A row leaves when it loses it; the object of a row that stays is the same object.
            try await db.execute("UPDATE live_search_doc SET text = 'apple crumble' WHERE text = 'apple pie'")
            next = try #require(try await changes.next())
            #expect(next.elements.contains { $0 === pie && $0.text == "apple crumble" })
            try await db.execute("UPDATE live_search_doc SET text = 'cherry' WHERE text = 'apple apple apple'")
            next = try #require(try await changes.next())
            #expect(Set(next.elements.map(\.text)) == ["apple crumble", "banana apple"])
        }
    }
}
