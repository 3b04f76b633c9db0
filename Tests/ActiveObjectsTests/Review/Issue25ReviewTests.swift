import Foundation
import Testing
@testable import ActiveObjects

// Bugs a review of the search and read-only change found, each proven by a test that failed
// before its fix.

final class R25Doc: ModelTestRecord {
    override class var tableName: String { "r25_doc" }
    @Column var title = ""
    @Column var body = ""
    @Column var year = 2000
    override class var searchableColumns: [String] { ["title", "body"] }
}

/// The same table, without search.
final class R25PlainDoc: ModelTestRecord {
    override class var tableName: String { "r25_doc" }
    @Column var title = ""
    @Column var body = ""
    @Column var year = 2000
}

final class R25Keyed: ModelTestRecord {
    override class var tableName: String { "r25_keyed" }
    override class var primaryKey: String { "code" }
    @Column var code = ""
    @Column var words = ""
    override class var searchableColumns: [String] { ["words"] }
}

@discardableResult
private func saveDoc(_ title: String, _ body: String = "") throws -> R25Doc {
    let doc = R25Doc()
    doc.title = title
    doc.body = body
    try doc.save()
    return doc
}

private func checkIntegrity(_ db: Database, index: String) throws {
    let quoted = SQLIdentifier.quote(index)
    try db.execute("INSERT INTO \(quoted)(\(quoted), rank) VALUES('integrity-check', 1)")
}

@Suite struct Issue25ReviewTests {
    @Test func createTableOfAModelWithoutSearchKeepsTheAppsOwnFTSTable() throws {
        try withFileModelDB { db in
            try R25PlainDoc.createTable()
            try db.execute("CREATE VIRTUAL TABLE r25_doc_search USING fts5(note)")
            try db.execute("INSERT INTO r25_doc_search (note) VALUES ('a note the user wrote')")
            #expect(try R25PlainDoc.schemaPlan().isEmpty)
            try R25PlainDoc.createTable()
            #expect(try db.scalar("SELECT count(*) FROM r25_doc_search") == 1)
        }
    }

    @Test func anFTSTableOfAnotherTableIsRefusedNotDropped() throws {
        try withFileModelDB { db in
            try R25PlainDoc.createTable()
            try db.execute("CREATE TABLE other_notes (id INTEGER PRIMARY KEY, note TEXT)")
            try db.execute("CREATE VIRTUAL TABLE r25_doc_search USING fts5(note, content='other_notes')")
            #expect(throws: ActiveObjectError.self) { _ = try R25Doc.schemaPlan() }
            #expect(throws: ActiveObjectError.self) { try R25Doc.createTable() }
            #expect(try db.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'r25_doc_search'") == 1)
        }
    }

    @Test func aTableMadeAgainDoesNotKeepTheOldRowsInItsIndex() throws {
        try withFileModelDB { db in
            try R25Doc.createTable()
            try saveDoc("alpha")
            try db.execute("DROP TABLE r25_doc")
            try R25Doc.createTable()
            let fresh = try saveDoc("beta")
            #expect(fresh.id == 1)
            #expect(try R25Doc.search("alpha").all().map(\.title) == [])
            #expect(try R25Doc.search("beta").all().map(\.title) == ["beta"])
            try checkIntegrity(db, index: "r25_doc_search")
        }
    }

    @Test func anUpdateOfTheRowIDByItsOwnNameIsFollowed() throws {
        try withFileModelDB { db in
            try R25Doc.createTable()
            try saveDoc("alpha")
            try db.execute("UPDATE r25_doc SET rowid = 500")
            #expect(try R25Doc.search("alpha").all().map(\.id) == [500])
            try db.execute("UPDATE r25_doc SET title = title, year = 3")        // nothing indexed changes
            #expect(try R25Doc.search("alpha").all().map(\.id) == [500])
            try checkIntegrity(db, index: "r25_doc_search")
        }
    }

    @Test func aNaturalKeyRowsRowIDChangeIsFollowed() throws {
        try withFileModelDB { db in
            try R25Keyed.createTable()
            let doc = R25Keyed()
            doc.code = "a"
            doc.words = "red green"
            try doc.save()
            try db.execute("UPDATE r25_keyed SET rowid = rowid + 100")
            #expect(try R25Keyed.search("green").all().map(\.code) == ["a"])
            try db.execute("UPDATE r25_keyed SET code = 'b'")
            #expect(try R25Keyed.search("green").all().map(\.code) == ["b"])
            try checkIntegrity(db, index: "r25_keyed_search")
        }
    }

    @Test func idOfAKeylessViewInQueries() throws {
        try withOrdersAndView { (_: Database) throws -> Void in
            #expect(try OrderTotal.all.all().allSatisfy { $0.id == nil })
            #expect(try OrderTotal.all.pluck(\.$id) == [nil, nil, nil, nil])
            #expect(try OrderTotal.all.count(\.$id) == 0)
            #expect(try OrderTotal.all.order(by: \.$id).all().count == 4)
        }
    }
}
