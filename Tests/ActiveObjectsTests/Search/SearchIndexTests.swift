import Foundation
import Testing
@testable import ActiveObjects

// The index behind `search(_:)`: created, changed and dropped by createTable(), and kept in
// step by triggers with every write to the table, whoever makes it.

final class PlainSearchNote: ModelTestRecord {
    @Column var text = ""
}

final class KeyedDoc: ModelTestRecord {
    override class var primaryKey: String { "code" }
    @Column var code = ""
    @Column var words = ""
    override class var searchableColumns: [String] { ["words"] }
}

final class RenamedArticle: ModelTestRecord {
    override class var tableName: String { "search_article" }
    @Column(renamedFrom: "title") var headline = ""
    @Column var body = ""
    @Column var year = 2000
    override class var searchableColumns: [String] { ["headline", "body"] }
}

final class NoRowIDDoc: ModelTestRecord {
    override class var withoutRowID: Bool { true }
    override class var primaryKey: String { "code" }
    @Column var code = ""
    @Column var words = ""
    override class var searchableColumns: [String] { ["words"] }
}

final class UnknownSearchColumn: ModelTestRecord {
    @Column var words = ""
    override class var searchableColumns: [String] { ["words", "missing"] }
}

final class RankColumnDoc: ModelTestRecord {
    @Column var rank = ""
    override class var searchableColumns: [String] { ["rank"] }
}

func objectNames(_ db: Database) throws -> Set<String> {
    Set(try db.rows("SELECT name FROM sqlite_master WHERE name LIKE 'search_article%'").map { try $0[0] as String })
}

@Suite struct SearchIndexTests {
    @Test func createTablePlansTheIndexThenNothing() throws {
        try withFileModelDB { db in
            let plan = try SearchArticle.schemaPlan()
            #expect(plan.count == 5)
            #expect(plan[1].hasPrefix("CREATE VIRTUAL TABLE \"search_article_search\" USING fts5(\"title\", \"body\", content='search_article'"))
            #expect(plan[2...].allSatisfy { $0.hasPrefix("CREATE TRIGGER") })
            try SearchArticle.createTable()
            #expect(try SearchArticle.schemaPlan().isEmpty)
            #expect(try objectNames(db).isSuperset(of: ["search_article_search", "search_article_search_insert",
                                                        "search_article_search_delete", "search_article_search_update"]))
        }
    }

    @Test func theIndexFollowsEveryWriter() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("models.sqlite")
        let db = try Database(path: path)
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            try SearchArticle.createTable()
            // Models: save, update, delete, insertAll, upsert.
            let first = try saveArticle("alpha", "one")
            first.body = "two"
            try first.save()
            #expect(try SearchArticle.search("one").count() == 0)
            #expect(try SearchArticle.search("two").count() == 1)
            let batch = (0..<5).map { index -> SearchArticle in
                let article = SearchArticle()
                article.title = "batch \(index)"
                return article
            }
            try SearchArticle.insertAll(batch)
            #expect(try SearchArticle.search("batch").count() == 5)
            #expect(try batch[0].delete())
            #expect(try SearchArticle.search("batch").count() == 4)
            let upserted = SearchArticle()
            upserted.id = first.id
            upserted.title = "omega"
            try upserted.upsert()
            #expect(try SearchArticle.search("alpha").count() == 0)
            #expect(try SearchArticle.search("omega").count() == 1)
            // Raw SQL.
            try db.execute("INSERT INTO search_article (title, body, year) VALUES ('raw gamma', '', 1)")
            try db.execute("UPDATE search_article SET body = 'delta' WHERE title = 'raw gamma'")
            #expect(try titles(SearchArticle.search("gamma delta")) == ["raw gamma"])
            try db.execute("UPDATE search_article SET id = 500 WHERE title = 'raw gamma'")   // the rowid moves
            #expect(try SearchArticle.search("gamma").all().map(\.id) == [500])
            try db.execute("DELETE FROM search_article WHERE title = 'raw gamma'")
            #expect(try SearchArticle.search("gamma").count() == 0)
            // Another connection to the file.
            let other = try Database(path: path)
            try other.execute("INSERT INTO search_article (title, body, year) VALUES ('from elsewhere', 'epsilon', 2)")
            try other.close()
            #expect(try titles(SearchArticle.search("epsilon")) == ["from elsewhere"])
            // A transaction rolled back leaves the index as it was.
            do {
                try db.transaction {
                    try saveArticle("zeta", "")
                    throw CancellationError()
                }
            } catch is CancellationError {}
            #expect(try SearchArticle.search("zeta").count() == 0)
            try checkIndexIntegrity(db)
        }
    }

    @Test func anotherProcessWritesAreIndexed() throws {
        let shell = URL(fileURLWithPath: "/usr/bin/sqlite3")
        guard FileManager.default.isExecutableFile(atPath: shell.path) else {
            // .ci/run installs the sqlite3 shell; a machine without it proves this with another
            // connection (theIndexFollowsEveryWriter).
            return
        }
        let folder = try TemporaryDirectory()
        let path = folder.path("models.sqlite")
        let db = try Database(path: path)
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            try SearchArticle.createTable()
            try saveArticle("kept", "before")
            let process = Process()
            process.executableURL = shell
            process.arguments = [path, "INSERT INTO search_article (title, body, year) VALUES ('shell', 'written by sqlite3', 3); UPDATE search_article SET body = 'after' WHERE title = 'kept';"]
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            #expect(try titles(SearchArticle.search("sqlite3 written")) == ["shell"])
            #expect(try titles(SearchArticle.search("after")) == ["kept"])
            #expect(try SearchArticle.search("before").count() == 0)
            try checkIndexIntegrity(db)
        }
    }

    @Test func addingTheIndexIndexesTheRowsAlreadyThere() throws {
        try withFileModelDB { db in
            try UnindexedArticle.createTable()
            for index in 0..<30 {
                let article = UnindexedArticle()
                article.title = "old row \(index)"
                article.body = index % 2 == 0 ? "even" : "odd"
                try article.save()
            }
            #expect(try SearchArticle.schemaPlan().last == "INSERT INTO \"search_article_search\"(\"search_article_search\") VALUES('rebuild')")
            try SearchArticle.createTable()
            #expect(try SearchArticle.search("old even").count() == 15)
            #expect(try SearchArticle.search("row").count() == 30)
            try checkIndexIntegrity(db)
        }
    }

    @Test func changingTheSearchableColumnsRebuildsTheIndex() throws {
        try withFileModelDB { db in
            try TitleIndexedArticle.createTable()
            let article = TitleIndexedArticle()
            article.title = "title words"
            article.body = "body words"
            try article.save()
            #expect(try SearchArticle.search("body").count() == 0)   // SearchArticle reads the same index
            // Adding a column: the index is made again, with every row.
            try SearchArticle.createTable()
            #expect(try SearchArticle.search("body").count() == 1)
            #expect(try SearchArticle.search("title words").count() == 1)
            try checkIndexIntegrity(db)
            // Removing one: again.
            try TitleIndexedArticle.createTable()
            #expect(try SearchArticle.schemaPlan().contains { $0.hasPrefix("DROP TABLE \"search_article_search\"") })
            #expect(try TitleIndexedArticle.schemaPlan().isEmpty)
            // No searchable column: the index and its triggers are dropped; writes still work.
            try UnindexedArticle.createTable()
            #expect(try objectNames(db) == ["search_article"])
            let later = UnindexedArticle()
            later.title = "after the index"
            try later.save()
            #expect(try UnindexedArticle.all.count() == 2)
            // And back: every row indexed.
            try SearchArticle.createTable()
            #expect(try SearchArticle.search("after index").count() == 1)
        }
    }

    @Test func renamingAndRebuildingKeepTheIndex() throws {
        try withFileModelDB { db in
            try SearchArticle.createTable()
            try saveArticle("renamed title", "some body")
            try RenamedArticle.createTable()
            #expect(try RenamedArticle.search("renamed").all().map(\.headline) == ["renamed title"])
            let article = RenamedArticle()
            article.headline = "second headline"
            try article.save()
            #expect(try RenamedArticle.search("headline").count() == 1)
            try checkIndexIntegrity(db)
            // A rebuild (the table is made again and renamed): the index follows the new table.
            try RenamedArticle.migrate(rebuildingTable: true)
            try db.execute("ALTER TABLE search_article ADD COLUMN extra TEXT")
            try RenamedArticle.migrate(rebuildingTable: true)
            #expect(try RenamedArticle.search("second").count() == 1)
            article.headline = "changed after rebuild"
            try article.save()
            #expect(try RenamedArticle.search("changed").count() == 1)
            #expect(try RenamedArticle.search("second").count() == 0)
            #expect(try RenamedArticle.schemaPlan().isEmpty)
            try checkIndexIntegrity(db)
        }
    }

    @Test func naturalKeysSoftDeleteAndIncluding() throws {
        try withFileModelDB { db in
            try KeyedDoc.createTable()
            for (code, words) in [("a", "red green"), ("b", "green blue"), ("c", "blue")] {
                let doc = KeyedDoc()
                doc.code = code
                doc.words = words
                try doc.save()
            }
            #expect(try KeyedDoc.search("green").order(by: \.$code).all().map(\.code) == ["a", "b"])
            #expect(try KeyedDoc.search("blu").all().allSatisfy { $0.id != nil })
            try BinnedNote.createTable()
            for text in ["keep this", "bin this"] {
                let note = BinnedNote()
                note.text = text
                try note.save()
            }
            let binned = try #require(try BinnedNote.search("bin").all().first)
            #expect(try binned.delete())
            #expect(try BinnedNote.search("this").all().map(\.text) == ["keep this"])
            #expect(try BinnedNote.search("this").withDeleted().count() == 2)
            #expect(try BinnedNote.search("this").onlyDeleted().all().map(\.text) == ["bin this"])
            _ = db
        }
    }

    @Test func modelsThatCannotBeSearchedSaySo() throws {
        try withFileModelDB { _ in
            for (model, fragment) in [(NoRowIDDoc.self as ActiveObject.Type, "WITHOUT ROWID"),
                                      (UnknownSearchColumn.self, "\"missing\""), (RankColumnDoc.self, "reserves")] {
                do {
                    _ = try ModelSchema.of(model)
                    Issue.record("\(model) was accepted")
                } catch let ActiveObjectError.invalidModel(_, reason) {
                    #expect(reason.contains(fragment), "\(reason)")
                }
            }
            try PlainSearchNote.createTable()
            do {
                _ = try PlainSearchNote.search("anything").all()
                Issue.record("search of a model without searchable columns did not throw")
            } catch let ActiveObjectError.misuse(message) {
                #expect(message.contains("searchableColumns"))
            }
        }
    }

    @Test func liveResultsOfASearch() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("models.sqlite"))
        defer { try? db.close() }
        try await ModelTestDB.$current.withValue(db) {
            try synchronously {
                try SearchArticle.createTable()
                try saveArticle("live one", "")
            }
            let probe = LiveProbe(SearchArticle.search("live").values()) { $0.map(\.title) }
            defer { probe.cancel() }
            #expect(await probe.waitFor(count: 1))
            _ = try synchronously { try saveArticle("live two", "live live") }
            let deadline = Date().addingTimeInterval(30)
            while probe.elements.last != ["live two", "live one"] && Date() < deadline {
                try await Task.sleep(nanoseconds: 5_000_000)
            }
            #expect(probe.elements.first == ["live one"])
            #expect(probe.elements.last == ["live two", "live one"])
        }
    }
}

/// FTS5's own check of an external-content index against its table.
func checkIndexIntegrity(_ db: Database) throws {
    try db.execute("INSERT INTO search_article_search(search_article_search, rank) VALUES('integrity-check', 1)")
}
