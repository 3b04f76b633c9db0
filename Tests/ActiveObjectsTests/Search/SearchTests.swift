import Foundation
import Testing
@testable import ActiveObjects

// Full-text search (API.md §20): an external-content FTS5 index kept in step by triggers,
// queried with `search(_:)`, which returns a chainable query ranked by bm25.

final class SearchArticle: ModelTestRecord {
    override class var tableName: String { "search_article" }
    @Column var title = ""
    @Column var body = ""
    @Column var year = 2000
    override class var searchableColumns: [String] { ["title", "body"] }
}

/// The same table without an index (as an earlier version of the app had it).
final class UnindexedArticle: ModelTestRecord {
    override class var tableName: String { "search_article" }
    @Column var title = ""
    @Column var body = ""
    @Column var year = 2000
}

/// The same table indexing the title only.
final class TitleIndexedArticle: ModelTestRecord {
    override class var tableName: String { "search_article" }
    @Column var title = ""
    @Column var body = ""
    @Column var year = 2000
    override class var searchableColumns: [String] { ["title"] }
}

final class BinnedNote: ModelTestRecord {
    @Column var text = ""
    @Column(role: .deletedAt) var deletedAt: Date? = nil
    override class var searchableColumns: [String] { ["text"] }
}

@discardableResult
func saveArticle(_ title: String, _ body: String, year: Int = 2000) throws -> SearchArticle {
    let article = SearchArticle()
    article.title = title
    article.body = body
    article.year = year
    try article.save()
    return article
}

func titles(_ query: Query<SearchArticle>) throws -> [String] { try query.all().map(\.title) }

@Suite struct SearchTests {
    @Test func findsRowsContainingEveryWordBestMatchFirst() throws {
        try withFileModelDB { _ in
            try SearchArticle.createTable()
            try saveArticle("Cooking with SQLite", "A long story about kitchens, ovens and the occasional database.")
            try saveArticle("SQLite in Swift", "SQLite and Swift: SQLite queries from Swift code, SQLite again.")
            try saveArticle("Gardening", "Nothing about databases here.")
            try saveArticle("Swift tips", "Closures, generics and more.")
            // Every word must be there, in any searchable column; best match (bm25) first.
            #expect(try titles(SearchArticle.search("sqlite swift")) == ["SQLite in Swift"])
            #expect(try titles(SearchArticle.search("sqlite")) == ["SQLite in Swift", "Cooking with SQLite"])
            #expect(try SearchArticle.search("sqlite").count() == 2)
            #expect(try SearchArticle.search("database gardening").count() == 0)
            // The last word is a prefix (search as you type); the others are whole words.
            #expect(try titles(SearchArticle.search("sqlite swi")) == ["SQLite in Swift"])
            #expect(try SearchArticle.search("sql swift").count() == 0)
            #expect(try Set(titles(SearchArticle.search("datab"))) == ["Cooking with SQLite", "Gardening"])
        }
    }

    @Test func caseAndDiacriticsAreFolded() throws {
        try withFileModelDB { _ in
            try SearchArticle.createTable()
            try saveArticle("Crème brûlée", "Un dessert français, très apprécié à Zürich.")
            try saveArticle("Creme brulee", "The same without accents.")
            try saveArticle("ÉCOLE", "Große Straße")
            #expect(try SearchArticle.search("creme BRULEE").count() == 2)
            #expect(try SearchArticle.search("CRÈME").count() == 2)
            #expect(try SearchArticle.search("francais zurich").count() == 1)
            #expect(try titles(SearchArticle.search("ecole")) == ["ÉCOLE"])
            #expect(try titles(SearchArticle.search("grosse")) == [])      // ß is not ss
            #expect(try titles(SearchArticle.search("große STRASSE")) == [])
            #expect(try titles(SearchArticle.search("GROSSE")) == [])
            #expect(try titles(SearchArticle.search("Große straße")) == ["ÉCOLE"])
            // A decomposed é (e + combining acute) finds the composed one.
            #expect(try SearchArticle.search("cre\u{301}me").count() == 2)
        }
    }

    @Test func chainsLikeAnyQuery() throws {
        try withFileModelDB { _ in
            try SearchArticle.createTable()
            for year in 2000..<2010 {
                try saveArticle("Swift \(year)", "News about swift and sqlite in \(year).", year: year)
            }
            try saveArticle("Other", "Nothing to see.", year: 2005)
            let query = SearchArticle.search("swift")
            #expect(try query.count() == 10)
            #expect(try query.where(\.$year >= 2005).count() == 5)
            #expect(try query.where("year < ?", 2003).count() == 3)
            // order(by:) replaces the ranking; limit, offset, page, first, pluck, exists.
            #expect(try query.order(by: \.$year, .descending).limit(3).all().map(\.year) == [2009, 2008, 2007])
            #expect(try query.order(by: \.$year).offset(8).all().map(\.year) == [2008, 2009])
            #expect(try query.order(by: \.$year).page(2, size: 4).map(\.year) == [2004, 2005, 2006, 2007])
            #expect(try query.order(by: \.$year).first()?.year == 2000)
            #expect(try Set(query.pluck(\.$year)) == Set(2000..<2010))
            #expect(try query.exists())
            #expect(try !SearchArticle.search("nothing swift").exists())
            #expect(try query.max(\.$year) == 2009)
            #expect(try query.limit(4).count() == 4)
            // The id of each object is its row's.
            for article in try query.all() {
                #expect(try SearchArticle.find(id: article.id!)?.title == article.title)
            }
            // Writes of the matching rows only.
            #expect(try SearchArticle.search("swift").where(\.$year < 2002).updateAll(["title": "Old", "body": "rewritten"]) == 2)
            #expect(try SearchArticle.search("swift").count() == 8)          // the index followed
            #expect(try SearchArticle.search("rewritten").count() == 2)
            #expect(try SearchArticle.search("rewritten").delete() == 2)
            #expect(try SearchArticle.all.count() == 9)
            #expect(try SearchArticle.search("swift").limit(2).delete() == 2)
            #expect(try SearchArticle.all.count() == 7)
            #expect(try SearchArticle.search("nothing").count() == 1)
        }
    }

    @Test func textIsNeverQuerySyntax() throws {
        try withFileModelDB { _ in
            try SearchArticle.createTable()
            try saveArticle("and or not near", "Words FTS5 would read as operators.")
            try saveArticle("C++ and \"quotes\"", "title: body -minus ^caret (paren) star*")
            #expect(try titles(SearchArticle.search("AND OR")) == ["and or not near"])
            #expect(try titles(SearchArticle.search("NOT near")) == ["and or not near"])
            #expect(try titles(SearchArticle.search("\"quotes\"")) == ["C++ and \"quotes\""])
            #expect(try titles(SearchArticle.search("title: -minus")) == ["C++ and \"quotes\""])
            #expect(try titles(SearchArticle.search("(paren) ^caret star*")) == ["C++ and \"quotes\""])
            #expect(try titles(SearchArticle.search("NEAR(and or)")) == ["and or not near"])
            // No word: no row (and no error).
            for text in ["", "   ", "\"", "*", "-", "()", "\"\"", "^", ":", "'", "\u{0}", "🙂"] {
                #expect(try SearchArticle.search(text).count() == 0, "\(text.debugDescription)")
            }
        }
    }

    @Test func hostileTextNeverThrows() throws {
        var generator = SeededGenerator(seed: 25)
        let pieces = ["\"", "'", "*", "-", "+", ":", "^", "(", ")", "{", "}", "[", "]", ",", ";", "\\", "%", "_",
                      "AND", "OR", "NOT", "NEAR", "NEAR/2", "title:", "body:", "rank", "rowid", "MATCH", "\u{0}",
                      "\n", "\t", " ", "é", "ß", "日本語", "🙂", "\u{301}", "\u{200B}", "\u{FEFF}", "swift", "sql",
                      "x", "0", "١٢", "Ω", "ﬁ", "\u{10FFFF}", "\u{E000}", String(repeating: "a", count: 300)]
        try withFileModelDB { _ in
            try SearchArticle.createTable()
            try saveArticle("swift and sql", "x 0 é ß 日本語")
            for round in 0..<600 {
                let count = Int.random(in: 0...12, using: &generator)
                var text = (0..<count).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &generator)] }
                    .joined(separator: Bool.random(using: &generator) ? " " : "")
                if round % 50 == 0 {
                    // Random Unicode scalars too.
                    text += String(String.UnicodeScalarView((0..<20).compactMap { _ in
                        Unicode.Scalar(UInt32.random(in: 0...0x2FFFF, using: &generator))
                    }))
                }
                do {
                    let hits = try SearchArticle.search(text).limit(20).all()
                    #expect(hits.count <= 1)
                    _ = try SearchArticle.search(text).count()
                } catch {
                    Issue.record("search(\(text.debugDescription)) threw \(error)")
                }
            }
            // A very long text (many words): still no throw.
            let long = (0..<5_000).map { "w\($0)" }.joined(separator: " OR ")
            #expect(try SearchArticle.search(long).count() == 0)
        }
    }

    /// Random texts and queries: search finds exactly the rows a plain Swift matcher finds
    /// (every word of the query a word of the row, the last one as a prefix; case and accents
    /// ignored), whatever separators and operators the query is written with.
    @Test func matchesWhatSwiftFinds() throws {
        var generator = SeededGenerator(seed: 2025)
        let vocabulary = ["café", "Cafe", "naïve", "NAIVE", "über", "uber", "año", "Ano", "garçon", "Ärger", "arg",
                          "sqlite", "SQL", "swift", "swiftly", "and", "or", "not", "near", "x1", "42", "日本"]
        let separators = [" ", "  ", "-", ", ", "\"", "(", ")", "*", ":", "^", "+", " AND ", " OR ", " NOT ", "\n"]
        func fold(_ word: Substring) -> String {
            word.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        }
        func words(_ text: String) -> [String] {
            text.split { !($0.isLetter || $0.isNumber) }.map(fold)
        }
        try withFileModelDB { _ in
            try SearchArticle.createTable()
            var rows: [(title: String, words: Set<String>)] = []
            for index in 0..<80 {
                let title = "t\(index) " + (0..<3).map { _ in vocabulary.randomElement(using: &generator)! }.joined(separator: " ")
                let body = (0..<6).map { _ in vocabulary.randomElement(using: &generator)! }.joined(separator: ", ")
                try saveArticle(title, body)
                rows.append((title, Set(words(title) + words(body))))
            }
            for _ in 0..<300 {
                let count = Int.random(in: 1...3, using: &generator)
                var queryWords = (0..<count).map { _ in vocabulary.randomElement(using: &generator)! }
                if Bool.random(using: &generator) {
                    // Typing: the last word cut short.
                    let last = queryWords[count - 1]
                    queryWords[count - 1] = String(last.prefix(Int.random(in: 1...last.count, using: &generator)))
                }
                let text = queryWords.map { $0 + separators.randomElement(using: &generator)! }.joined()
                // Every word of the text counts, the operators' names too (they are words).
                let folded = words(text)
                let expected = Set(rows.filter { row in
                    folded.enumerated().allSatisfy { index, word in
                        index == folded.count - 1 ? row.words.contains { $0.hasPrefix(word) } : row.words.contains(word)
                    }
                }.map(\.title))
                let found = try SearchArticle.search(text).all().map(\.title)
                #expect(Set(found) == expected, "search(\(text.debugDescription)): \(SearchPattern(text).matchExpression ?? "no word")")
                #expect(found.count == Set(found).count)
            }
        }
    }
}
