import CSQLiteBench
import Foundation

// The text of the search workloads (issue 25): articles written with real English words
// (`SearchWords.swift`, counted in offline English prose by `Scripts/search-words.py`), drawn
// with Zipf's law (word k of the list, most frequent first, with a probability proportional to
// 1/k), so that common words are common and rare words rare, as in prose. Every article is a
// pure function of its number and the corpus seed, so that the queries can be taken from
// articles without keeping 100,000 bodies in memory.

/// The vocabulary, most frequent first.
let searchVocabulary: [String] = searchVocabularyText.split(whereSeparator: \.isWhitespace).map(String.init)

/// The most frequent words, which a user does not type as a search (the queries skip them).
let searchStopWordCount = 100

/// Draws word ranks (0-based indexes into ``searchVocabulary``) with probability ∝ 1/(rank+1).
struct ZipfSampler {
    private let cumulative: [Double]

    init(count: Int, exponent: Double = 1.0) {
        var total = 0.0
        var cumulative: [Double] = []
        cumulative.reserveCapacity(count)
        for k in 1...count {
            total += 1 / pow(Double(k), exponent)
            cumulative.append(total)
        }
        self.cumulative = cumulative.map { $0 / total }
    }

    func next(using rng: inout SplitMix64) -> Int {
        let u = Double(rng.next() >> 11) * 0x1p-53
        var low = 0, high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] < u { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// One generated article: its text and the ranks of its words (title's, then body's).
struct SearchArticleText {
    var title: String
    var body: String
    var ranks: [Int]
}

/// Writes articles: a title of 6–10 words, and a body of 150–300 words in sentences of 8–20
/// words (capitalized, ending with a period); or, short, a title and one sentence.
struct ArticleWriter {
    let words = searchVocabulary
    let sampler = ZipfSampler(count: searchVocabulary.count)
    let seed: UInt64

    init(seed: UInt64) { self.seed = seed }

    /// Article `index` (any number: each has its own random stream).
    func article(_ index: Int, short: Bool = false) -> SearchArticleText {
        var rng = SplitMix64(seed: seed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        var ranks: [Int] = []
        let titleCount = 6 + Int(rng.next() % 5)
        ranks.reserveCapacity(short ? 30 : 310)
        var title = ""
        for i in 0..<titleCount {
            let rank = sampler.next(using: &rng)
            ranks.append(rank)
            if i > 0 { title += " " }
            title += i == 0 ? capitalized(words[rank]) : words[rank]
        }
        let bodyCount = short ? 8 + Int(rng.next() % 13) : 150 + Int(rng.next() % 151)
        var body = ""
        body.reserveCapacity(bodyCount * 9)
        var left = bodyCount
        while left > 0 {
            let sentence = min(left, short ? left : 8 + Int(rng.next() % 13))
            for i in 0..<sentence {
                let rank = sampler.next(using: &rng)
                ranks.append(rank)
                if i == 0 {
                    if !body.isEmpty { body += " " }
                    body += capitalized(words[rank])
                } else {
                    body += " "
                    body += words[rank]
                }
            }
            body += "."
            left -= sentence
        }
        return SearchArticleText(title: title, body: body, ranks: ranks)
    }

    private func capitalized(_ word: String) -> String {
        word.prefix(1).uppercased() + word.dropFirst()
    }
}

/// One search as a user types it: a word of an article, then the beginning (3–6 letters) of
/// another word of the same article.
struct SearchQuery {
    var first: String
    var prefix: String
    /// What the user typed: `"first pre"`.
    var text: String { "\(first) \(prefix)" }
    /// The FTS5 pattern the library builds from that text (`"first" "pre" *`); the words are
    /// lower-case ASCII letters, so no quoting is needed.
    var pattern: String { "\"\(first)\" \"\(prefix)\" *" }
}

/// `count` queries from random articles of the corpus (seeded: the same list for everyone):
/// two different words of the article that are not among the ``searchStopWordCount`` most
/// frequent ones, each occurrence equally likely (so frequent words more often), the second cut
/// to 3–6 letters (the whole word when shorter), as if being typed.
func makeSearchQueries(count: Int, corpusRows: Int, writer: ArticleWriter, seed: UInt64) -> [SearchQuery] {
    var rng = SplitMix64(seed: seed)
    let words = searchVocabulary
    var queries: [SearchQuery] = []
    while queries.count < count {
        let article = writer.article(Int(rng.next() % UInt64(corpusRows)))
        let candidates = article.ranks.filter { $0 >= searchStopWordCount }
        guard candidates.count >= 2 else { continue }
        let first = candidates[Int(rng.next() % UInt64(candidates.count))]
        let second = candidates[Int(rng.next() % UInt64(candidates.count))]
        let length = 3 + Int(rng.next() % 4)
        guard first != second, words[second].count >= 3 else { continue }
        queries.append(SearchQuery(first: words[first], prefix: String(words[second].prefix(length))))
    }
    return queries
}

/// The statements that make a table as the library made it: every `sqlite_master` entry of
/// `table` and of its index `<table>_search` (the table, the FTS5 table, the triggers, any
/// index), in creation order. FTS5's shadow tables are created by the FTS5 table's statement.
func schemaStatements(of table: String, in connection: RawConnection) throws -> [String] {
    let statement = try connection.prepare("""
        SELECT sql FROM sqlite_master WHERE tbl_name IN (?1, ?1 || '_search') AND sql IS NOT NULL ORDER BY rowid
        """)
    defer { sqlite3_finalize(statement) }
    sqlite3_bind_text(statement, 1, table, -1, bench_sqlite_transient())
    var statements: [String] = []
    while sqlite3_step(statement) == SQLITE_ROW {
        statements.append(String(cString: sqlite3_column_text(statement, 0)))
    }
    return statements
}

/// Writes `rows` articles of `writer` into `article` in one transaction, with the sqlite3 C API
/// (the index follows through the library's triggers), then checkpoints. Returns the seconds
/// spent. Setup only: nothing of it is timed as a workload.
func loadSearchCorpus(path: String, rows: Int, writer: ArticleWriter) throws -> Double {
    let start = monotonicNanoseconds()
    let connection = try RawConnection(path: path)
    defer { connection.close() }
    try connection.execute("PRAGMA cache_size = -262144")   // 256 MiB for the index's segments
    let insert = try connection.prepare("INSERT INTO \"article\" (\"title\", \"body\") VALUES (?, ?)")
    defer { sqlite3_finalize(insert) }
    try connection.execute("BEGIN IMMEDIATE")
    let transient = bench_sqlite_transient()
    for index in 0..<rows {
        let article = writer.article(index)
        sqlite3_bind_text(insert, 1, article.title, -1, transient)
        sqlite3_bind_text(insert, 2, article.body, -1, transient)
        guard sqlite3_step(insert) == SQLITE_DONE else { throw connection.error("corpus insert") }
        sqlite3_reset(insert)
        if index % 20_000 == 19_999 { log("  \(index + 1) articles") }
    }
    try connection.execute("COMMIT")
    try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return Double(monotonicNanoseconds() - start) / 1e9
}
