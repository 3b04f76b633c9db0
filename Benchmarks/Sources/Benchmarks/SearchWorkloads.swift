import ActiveObjects
import CSQLiteBench
import Foundation

// Issue 25: full-text search (§20 of the API), against hand-written sqlite3 C-API code and GRDB
// running the same SQL on the same FTS5 table and triggers (made by the library's
// `createTable()`, copied statement by statement from its `sqlite_master` for the others).
// Opt-in: run only when named with `--only` (`search`, `search-insert`).
//
// - search: 100,000 articles (a title of 6–10 words, a body of 150–300, real English words
//   drawn with Zipf's law: `SearchCorpus.swift`) in one WAL file, shared by the contenders; a
//   fixed list of queries as typed (a word of a random article, then the first 3–6 letters of
//   another of its words); each query the 20 best matches as objects. Per query latency,
//   p50/p95 over the rounds, the contenders taking turns query by query (the same moment on
//   the machine for each query). Target: p95 ≤ 5 ms.
//   Contenders: ActiveObjects (`Article.search(text).limit(20).all()`), raw-C (the library's
//   own SQL, taken from its trace, with the match pattern bound as a parameter; one prepared
//   statement), raw-C-prepared (the same, prepared and finalized for each query), raw-C-literal
//   (the library's SQL with the pattern inlined as the library writes it, prepared and
//   finalized for each query: the library's statement handling when its cache misses, which
//   it does for every new search text), GRDB-hand (the same SQL, bound,
//   `SQLRequest(cached: true)`, a hand-written `init(row:)`, a `read` per query).
// - search-insert: the cost of the index on writes: rows inserted into the searchable table
//   vs the same table without the index (plain), each run on a new file (WAL, the library's
//   defaults: `synchronous = FULL` for everyone; GRDB's own WAL default is NORMAL), each insert
//   its own transaction (autocommit, what `save()` of a new object does) and 1,000 inserts per
//   transaction, with article-sized text and with short text (a title and one sentence).
//   ActiveObjects `save()` of a new object; raw-C one prepared INSERT; GRDB-hand `insert(db)`
//   of a record, in `write` (one per insert in autocommit). Target: searchable ≤ 2 × plain.

let searchWorkloads = ["search", "search-insert"]
let searchContenderNames = ["raw-C", "ActiveObjects", "raw-C-prepared", "raw-C-literal", "GRDB-hand", "raw-C-bm25"]
/// Contenders whose SQL differs from the library's (diagnostics): their hits may differ in the
/// order of equal ranks, so they are counted, not refused.
let searchDiagnosticContenders: Set<String> = ["raw-C-bm25"]

/// raw-C-bm25: the same search ranked by `bm25()` in a subquery with the limit (SQLite's sorter
/// keeps the best 20 rows), instead of FTS5's `rank` ordering (which sorts every match), the
/// rows joined after.
let bm25LimitSearchSQL = """
    SELECT "article"."id", "article"."title", "article"."body" FROM (SELECT rowid AS "r", bm25("article_search") AS "score" \
    FROM "article_search" WHERE "article_search" MATCH ? ORDER BY "score" LIMIT ?) AS "m" \
    JOIN "article" ON "article".rowid = "m"."r" ORDER BY "m"."score"
    """
let searchInsertContenderNames = ["raw-C", "ActiveObjects", "GRDB-hand"]
let searchTargetP95Milliseconds = 5.0
let searchInsertTargetRatio = 2.0
/// The limit of every search.
let searchLimit = 20

/// The searchable article of the workloads (API.md §20). Each of the two article models has a
/// database of its own (``benchDatabase``): search-insert writes into both at once.
final class SearchArticle: ActiveObject {
    override class var tableName: String { "article" }
    override class var searchableColumns: [String] { ["title", "body"] }
    override class var database: Database? { benchDatabase.current }
    static let benchDatabase = LockedBox<Database?>(nil)
    @Column var title = ""
    @Column var body = ""
}

/// The same table without the index.
final class PlainArticle: ActiveObject {
    override class var tableName: String { "article" }
    override class var database: Database? { benchDatabase.current }
    static let benchDatabase = LockedBox<Database?>(nil)
    @Column var title = ""
    @Column var body = ""
}

protocol ArticleModel: ActiveObject {
    static var benchDatabase: LockedBox<Database?> { get }
    var title: String { get set }
    var body: String { get set }
}
extension SearchArticle: ArticleModel {}
extension PlainArticle: ArticleModel {}

/// What the raw contenders materialize.
final class RawArticle {
    var id: Int64 = 0
    var title = ""
    var body = ""
}

/// The checksum of one hit at `position` (0-based): every column read, the order checked.
@inline(__always)
func hitChecksum(position: Int, id: Int64, title: String, body: String) -> Int {
    (position + 1) &* Int(id) &+ title.utf8.count &* 3 &+ body.utf8.count
}

// MARK: Search contenders

protocol SearchContender: AnyObject {
    var name: String { get }
    /// The best matches of `query` as objects; a checksum of them.
    func search(_ query: SearchQuery) throws -> Int
    func close() throws
}

/// The library's search SQL, with the match pattern as a parameter or inlined.
struct SearchSQL {
    /// The SQL exactly as the library ran it for `sample`, the pattern inlined.
    let library: String
    /// The same with `?` in place of the pattern literal (parameters: pattern, limit).
    let bound: String
    /// `library` before and after the sample's literal.
    private let head: String
    private let tail: String

    init(library: String, sample: SearchQuery) throws {
        let literal = Self.quoted(sample.pattern)
        let parts = library.components(separatedBy: literal)
        guard parts.count == 2 else {
            throw BenchError("search: the library's SQL does not hold the pattern \(literal) once: \(library)")
        }
        self.library = library
        bound = parts.joined(separator: "?")
        head = parts[0]
        tail = parts[1]
    }

    /// The library's SQL for `query` (its literal in place of the sample's), by concatenation
    /// only: the time spent here is not SQLite's.
    func literal(_ query: SearchQuery) -> String {
        head + Self.quoted(query.pattern) + tail
    }

    /// An SQL string literal. The patterns hold no `'` (words of letters), so no escaping is
    /// needed; one would be refused.
    private static func quoted(_ text: String) -> String {
        precondition(!text.utf8.contains(UInt8(ascii: "'")), "a search pattern with a quote")
        return "'" + text + "'"
    }
}

final class RawSearchContender: SearchContender {
    /// How the statement is made: one prepared statement, the pattern bound (`reused`); the same
    /// SQL prepared and finalized for each query (`prepared`); the library's SQL with the
    /// pattern inlined, prepared and finalized for each query (`literal`); one prepared
    /// statement of ``bm25LimitSearchSQL`` (`bm25Limit`).
    enum Mode { case reused, prepared, literal, bm25Limit }
    let name: String
    private let connection: RawConnection
    private let sql: SearchSQL
    private let mode: Mode
    private var statement: OpaquePointer?

    init(name: String, path: String, sql: SearchSQL, mode: Mode) throws {
        self.name = name
        self.sql = sql
        self.mode = mode
        connection = try RawConnection(path: path)
        if mode == .reused || mode == .bm25Limit {
            statement = try connection.prepare(mode == .reused ? sql.bound : bm25LimitSearchSQL)
            sqlite3_bind_int64(statement, 2, Int64(searchLimit))
        }
    }

    func close() throws {
        sqlite3_finalize(statement)
        connection.close()
    }

    func search(_ query: SearchQuery) throws -> Int {
        let s: OpaquePointer
        switch mode {
        case .reused, .bm25Limit:
            s = statement!
            sqlite3_bind_text(s, 1, query.pattern, -1, bench_sqlite_transient())
        case .prepared, .literal:
            // As the library does for a text it has not seen: prepare, run, finalize.
            var prepared: OpaquePointer?
            let text = mode == .literal ? sql.literal(query) : sql.bound
            guard sqlite3_prepare_v2(connection.handle, text, -1, &prepared, nil) == SQLITE_OK,
                  let prepared else { throw connection.error("prepare search") }
            if mode == .literal {
                sqlite3_bind_int64(prepared, 1, Int64(searchLimit))
            } else {
                sqlite3_bind_text(prepared, 1, query.pattern, -1, bench_sqlite_transient())
                sqlite3_bind_int64(prepared, 2, Int64(searchLimit))
            }
            s = prepared
        }
        defer { if statement != nil { sqlite3_reset(s) } else { sqlite3_finalize(s) } }
        var hits: [RawArticle] = []
        hits.reserveCapacity(searchLimit)
        while true {
            let code = sqlite3_step(s)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw connection.error("search") }
            let article = RawArticle()
            article.id = sqlite3_column_int64(s, 0)
            article.title = Self.text(s, 1)
            article.body = Self.text(s, 2)
            hits.append(article)
        }
        var checksum = 0
        for (i, hit) in hits.enumerated() { checksum &+= hitChecksum(position: i, id: hit.id, title: hit.title, body: hit.body) }
        return checksum
    }

    @inline(__always)
    static func text(_ s: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(s, column) else { return "" }
        let count = Int(sqlite3_column_bytes(s, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}

final class ActiveObjectsSearchContender: SearchContender {
    let name = "ActiveObjects"
    private let database: Database

    init(path: String) throws {
        database = try Database(path: path)   // the default options: WAL, readers
        SearchArticle.benchDatabase.withLock { $0 = database }
    }

    func close() throws {
        SearchArticle.benchDatabase.withLock { $0 = nil }
        try database.close()
    }

    func search(_ query: SearchQuery) throws -> Int {
        let hits = try SearchArticle.search(query.text).limit(searchLimit).all()
        var checksum = 0
        for (i, hit) in hits.enumerated() { checksum &+= hitChecksum(position: i, id: hit.id!, title: hit.title, body: hit.body) }
        return checksum
    }
}

// MARK: Insert contenders

protocol SearchInsertContender: AnyObject {
    var name: String { get }
    /// Inserts one row per article, each in its own transaction (`batch` nil) or `batch` per
    /// transaction; returns the sum of the new ids.
    func insert(_ articles: [SearchArticleText], batch: Int?) throws -> Int
    /// Untimed, before the run: one row inserted and deleted (statements prepared, schema read).
    func prime() throws
    /// `PRAGMA synchronous = …` on the writing connection.
    func execute(_ sql: String) throws
    func close() throws
}

final class RawInsertContender: SearchInsertContender {
    let name = "raw-C"
    private let connection: RawConnection
    private let insertStatement: OpaquePointer

    init(path: String) throws {
        connection = try RawConnection(path: path)
        insertStatement = try connection.prepare("INSERT INTO \"article\" (\"title\", \"body\") VALUES (?, ?)")
    }

    func close() throws {
        sqlite3_finalize(insertStatement)
        connection.close()
    }

    func execute(_ sql: String) throws { try connection.execute(sql) }

    func prime() throws {
        _ = try insert([SearchArticleText(title: "Prime", body: "One row.", ranks: [])], batch: nil)
        try connection.execute("DELETE FROM \"article\"")
    }

    func insert(_ articles: [SearchArticleText], batch: Int?) throws -> Int {
        let s = insertStatement
        let transient = bench_sqlite_transient()
        var checksum = 0
        for (i, article) in articles.enumerated() {
            if let batch, i % batch == 0 { try connection.execute("BEGIN IMMEDIATE") }
            sqlite3_bind_text(s, 1, article.title, -1, transient)
            sqlite3_bind_text(s, 2, article.body, -1, transient)
            guard sqlite3_step(s) == SQLITE_DONE else {
                sqlite3_reset(s)
                throw connection.error("insert")
            }
            sqlite3_reset(s)
            checksum &+= Int(sqlite3_last_insert_rowid(connection.handle))
            if let batch, i % batch == batch - 1 || i == articles.count - 1 { try connection.execute("COMMIT") }
        }
        return checksum
    }
}

final class ActiveObjectsInsertContender<Model: ArticleModel>: SearchInsertContender {
    let name = "ActiveObjects"
    private let database: Database

    init(path: String, model: Model.Type) throws {
        database = try Database(path: path)
        Model.benchDatabase.withLock { $0 = database }
    }

    func close() throws {
        Model.benchDatabase.withLock { $0 = nil }
        try database.close()
    }

    func execute(_ sql: String) throws { try database.execute(sql) }

    func prime() throws {
        let article = Model()
        article.title = "Prime"
        article.body = "One row."
        try article.save()
        _ = try article.delete()
    }

    func insert(_ articles: [SearchArticleText], batch: Int?) throws -> Int {
        var checksum = 0
        func save(_ text: SearchArticleText) throws {
            let article = Model()
            article.title = text.title
            article.body = text.body
            try article.save()
            checksum &+= Int(article.id!)
        }
        guard let batch else {
            for text in articles { try save(text) }
            return checksum
        }
        var start = 0
        while start < articles.count {
            let end = min(articles.count, start + batch)
            try database.transaction {
                for text in articles[start..<end] { try save(text) }
            }
            start = end
        }
        return checksum
    }
}

// MARK: Results

struct SearchResults {
    /// search: per contender, one latency per query per timed round (ms), in query order.
    var latencies: [String: [Double]] = [:]
    /// search: the process's CPU time of the same calls (ms), which load on the machine
    /// disturbs less than wall time.
    var cpu: [String: [Double]] = [:]
    var contenders: [String] = []
    var rows = 0
    var queries = 0
    var rounds = 0
    var buildSeconds = 0.0
    var fileMiB = 0.0
    /// Per query: the rows it matches (of the index, before the limit).
    var matches: [Int] = []
    /// Per query: `SELECT count(*) … MATCH` (matching without ranking, raw C, warm; ms).
    var countMilliseconds: [Double] = []
    /// Per query: sqlite3_prepare_v2 of the library's SQL with its literal (µs).
    var prepareMicroseconds: [Double] = []
    var plan = ""
    /// Per diagnostic contender: the queries whose hits (or their order) differ from the library's.
    var differingQueries: [String: Int] = [:]
    var librarySQL = ""
    var sampleQueries: [String] = []
    /// search-insert: per variant, µs per row: each insert's own time in the autocommit modes,
    /// each run's time ÷ its rows in the batch mode; wall and the process's CPU time.
    var inserts: [InsertKey: (wall: [Double], cpu: [Double])] = [:]
    var insertRounds = 0
    var autocommitRows = 0
    var batchRows = 0
}

struct InsertKey: Hashable {
    var contender: String
    var text: String        // article | short
    var mode: String        // autocommit | autocommit-normal | batch1000
    var table: String       // plain | searchable
}

// MARK: Running

@MainActor
func runSearchSection(sizes: Sizes, directory: URL) throws -> SearchResults {
    var results = SearchResults()
    // Opt-in: never part of a run that does not name them.
    guard searchWorkloads.contains(where: { sizes.onlyWorkloads?.contains($0) ?? false }) else { return results }
    let ddl = try searchSchemas(directory: directory)
    if sizes.wants("search") { try runSearch(sizes: sizes, directory: directory, ddl: ddl.searchable, into: &results) }
    if sizes.wants("search-insert") { try runSearchInsert(sizes: sizes, directory: directory, ddl: ddl, into: &results) }
    return results
}

/// The statements the library runs to create the searchable table and the plain one, read
/// back from files where its `createTable()` made them.
func searchSchemas(directory: URL) throws -> (searchable: [String], plain: [String]) {
    func schema<Model: ArticleModel>(_ model: Model.Type, _ name: String) throws -> [String] {
        let path = directory.appendingPathComponent("search-ddl-\(name).sqlite").path
        defer { removeDatabaseFiles(path) }
        do {
            let database = try Database(path: path)
            defer { try? database.close() }
            try Model.createTable(in: database)
        }
        let connection = try RawConnection(path: path)
        defer { connection.close() }
        return try schemaStatements(of: "article", in: connection)
    }
    let searchable = try schema(SearchArticle.self, "searchable")
    let plain = try schema(PlainArticle.self, "plain")
    guard searchable.contains(where: { $0.contains("USING fts5") }), searchable.filter({ $0.hasPrefix("CREATE TRIGGER") }).count == 3,
          !plain.contains(where: { $0.contains("fts5") || $0.hasPrefix("CREATE TRIGGER") }) else {
        throw BenchError("search: unexpected schemas:\n\(searchable.joined(separator: "\n"))\n--\n\(plain.joined(separator: "\n"))")
    }
    return (searchable, plain)
}

/// Whether the file at `path` holds the corpus this run would build: the library's schema of
/// today, `rows` articles, the first and the last as `writer` writes them.
func searchCorpusIsCurrent(path: String, rows: Int, writer: ArticleWriter, ddl: [String]) throws -> Bool {
    guard FileManager.default.fileExists(atPath: path) else { return false }
    let connection = try RawConnection(path: path)
    defer { connection.close() }
    guard (try? schemaStatements(of: "article", in: connection)) == ddl else { return false }
    let select = try connection.prepare("SELECT count(*), (SELECT title FROM article WHERE rowid = 1), (SELECT body FROM article ORDER BY rowid DESC LIMIT 1) FROM article")
    defer { sqlite3_finalize(select) }
    guard sqlite3_step(select) == SQLITE_ROW, Int(sqlite3_column_int64(select, 0)) == rows,
          sqlite3_column_type(select, 1) == SQLITE_TEXT, sqlite3_column_type(select, 2) == SQLITE_TEXT else { return false }
    return String(cString: sqlite3_column_text(select, 1)) == writer.article(0).title
        && String(cString: sqlite3_column_text(select, 2)) == writer.article(rows - 1).body
}

func removeDatabaseFiles(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// Creates a new database file holding `statements`.
func createDatabase(at path: String, statements: [String]) throws {
    removeDatabaseFiles(path)
    let connection = try RawConnection(path: path)
    defer { connection.close() }
    for sql in statements { try connection.execute(sql) }
}

@MainActor
func runSearch(sizes: Sizes, directory: URL, ddl: [String], into results: inout SearchResults) throws {
    let rows = sizes.searchRows
    let path = sizes.searchCorpusPath ?? directory.appendingPathComponent("search-corpus.sqlite").path
    defer { if sizes.searchCorpusPath == nil { removeDatabaseFiles(path) } }
    let writer = ArticleWriter(seed: 0xF75_C0_2A5)
    if sizes.searchCorpusPath != nil, try searchCorpusIsCurrent(path: path, rows: rows, writer: writer, ddl: ddl) {
        log("search: reusing the corpus in \(path)")
    } else {
        log("search: building \(rows) articles (\(searchVocabulary.count)-word vocabulary, Zipf) into one file, the index kept by the library's triggers")
        removeDatabaseFiles(path)
        do {
            let database = try Database(path: path)
            try SearchArticle.createTable(in: database)
            try database.close()
        }
        results.buildSeconds = try loadSearchCorpus(path: path, rows: rows, writer: writer)
    }
    results.fileMiB = Double((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) / 1_048_576
    log("  built in \(format(results.buildSeconds, decimals: 1)) s, \(format(results.fileMiB, decimals: 0)) MiB")
    let queries = makeSearchQueries(count: sizes.searchQueries, corpusRows: rows, writer: writer, seed: 0x5EA_2C4)
    results.rows = rows
    results.queries = queries.count
    results.sampleQueries = queries.prefix(8).map(\.text)

    // The library's SQL, from its trace, for the first query.
    let traced = LockedBox<[String]>([])
    do {
        var options = Database.Options()
        options.trace = { sql, _ in traced.withLock { $0.append(sql) } }
        let database = try Database(path: path, options: options)
        SearchArticle.benchDatabase.withLock { $0 = database }
        _ = try SearchArticle.search(queries[0].text).limit(searchLimit).all()
        SearchArticle.benchDatabase.withLock { $0 = nil }
        try database.close()
    }
    guard let library = traced.current.first(where: { $0.contains(" MATCH ") }) else {
        throw BenchError("search: no MATCH statement in the library's trace: \(traced.current)")
    }
    let sql = try SearchSQL(library: library, sample: queries[0])
    results.librarySQL = library

    // Untimed: matches, prepare cost, plan, and the select list's order.
    let probe = try RawConnection(path: path)
    do {
        defer { probe.close() }
        let count = try probe.prepare("SELECT count(*) FROM \"article_search\" WHERE \"article_search\" MATCH ?")
        defer { sqlite3_finalize(count) }
        for pass in 0..<2 {   // the second pass is timed (warm)
            for query in queries {
                let start = monotonicNanoseconds()
                sqlite3_bind_text(count, 1, query.pattern, -1, bench_sqlite_transient())
                guard sqlite3_step(count) == SQLITE_ROW else { throw probe.error("count") }
                let matches = Int(sqlite3_column_int64(count, 0))
                sqlite3_reset(count)
                if pass == 0 {
                    results.matches.append(matches)
                } else {
                    results.countMilliseconds.append(Double(monotonicNanoseconds() - start) / 1e6)
                }
            }
        }
        for _ in 0..<2 {   // the second pass is reported (warm)
            results.prepareMicroseconds = try queries.map { query in
                let text = sql.literal(query)
                var statement: OpaquePointer?
                let start = monotonicNanoseconds()
                guard sqlite3_prepare_v2(probe.handle, text, -1, &statement, nil) == SQLITE_OK else { throw probe.error("prepare") }
                let elapsed = monotonicNanoseconds() - start
                sqlite3_finalize(statement)
                return Double(elapsed) / 1000
            }
        }
        let explain = try probe.prepare("EXPLAIN QUERY PLAN " + sql.bound)
        defer { sqlite3_finalize(explain) }
        var plan: [String] = []
        while sqlite3_step(explain) == SQLITE_ROW { plan.append(String(cString: sqlite3_column_text(explain, 3))) }
        results.plan = plan.joined(separator: "; ")
        let select = try probe.prepare(sql.bound)
        defer { sqlite3_finalize(select) }
        let names = (0..<sqlite3_column_count(select)).map { String(cString: sqlite3_column_name(select, $0)) }
        guard names == ["id", "title", "body"] else {
            throw BenchError("search: the library selects \(names); the raw and GRDB readers expect id, title, body")
        }
    }

    let names = searchContenderNames.filter { sizes.onlyContenders?.contains($0) ?? true }
    let contenders: [SearchContender] = try names.map { name in
        switch name {
        case "raw-C": return try RawSearchContender(name: name, path: path, sql: sql, mode: .reused)
        case "raw-C-prepared": return try RawSearchContender(name: name, path: path, sql: sql, mode: .prepared)
        case "raw-C-literal": return try RawSearchContender(name: name, path: path, sql: sql, mode: .literal)
        case "raw-C-bm25": return try RawSearchContender(name: name, path: path, sql: sql, mode: .bm25Limit)
        case "ActiveObjects": return try ActiveObjectsSearchContender(path: path)
        case "GRDB-hand": return try GRDBSearchContender(path: path, sql: sql)
        default: throw BenchError("unknown search contender \(name)")
        }
    }
    defer { for contender in contenders { try? contender.close() } }
    results.contenders = contenders.map(\.name)
    results.rounds = sizes.searchRounds
    log("search: \(queries.count) queries (two words, the second a prefix), limit \(searchLimit), \(sizes.warmups) warm-up + \(sizes.searchRounds) rounds, contenders taking turns query by query")

    // Each query's checksum, the same for every contender and round.
    var expected = [Int?](repeating: nil, count: queries.count)
    var diagnosticChecksums: [String: [Int: Int]] = [:]
    for round in 0..<(sizes.warmups + sizes.searchRounds) {
        for (q, query) in queries.enumerated() {
            for k in contenders.indices {
                let contender = contenders[(k + q + round) % contenders.count]
                let cpuStart = processCPUNanoseconds()
                let start = monotonicNanoseconds()
                let checksum = try contender.search(query)
                let end = monotonicNanoseconds()
                let cpu = Double(processCPUNanoseconds() - cpuStart) / 1e6
                let elapsed = Double(end - start) / 1e6
                if searchDiagnosticContenders.contains(contender.name) {
                    if round == 0 { diagnosticChecksums[contender.name, default: [:]][q] = checksum }
                } else {
                    if let want = expected[q], want != checksum {
                        throw BenchError("search \"\(query.text)\": \(contender.name) computed checksum \(checksum), expected \(want)")
                    }
                    expected[q] = checksum
                }
                if round >= sizes.warmups {
                    results.latencies[contender.name, default: []].append(elapsed)
                    results.cpu[contender.name, default: []].append(cpu)
                }
            }
        }
    }
    for (name, checksums) in diagnosticChecksums {
        results.differingQueries[name] = checksums.filter { expected[$0.key] != nil && expected[$0.key] != $0.value }.count
    }
    log("  search: done")
}

@MainActor
func runSearchInsert(sizes: Sizes, directory: URL, ddl: (searchable: [String], plain: [String]),
                     into results: inout SearchResults) throws {
    let writer = ArticleWriter(seed: 0x1_25E_A7)
    let names = searchInsertContenderNames.filter { sizes.onlyContenders?.contains($0) ?? true }
    // synchronous: FULL is the library's default (an fsync per commit); NORMAL shows the same
    // autocommit inserts without the fsync that dominates their wall time.
    let modes: [(name: String, batch: Int?, rows: Int, synchronous: String)] = [
        ("autocommit", nil, sizes.searchInsertAutocommitRows, "FULL"),
        ("autocommit-normal", nil, sizes.searchInsertAutocommitRows, "NORMAL"),
        ("batch1000", 1_000, sizes.searchInsertBatchRows, "FULL"),
    ]
    results.insertRounds = sizes.searchInsertRounds
    results.autocommitRows = sizes.searchInsertAutocommitRows
    results.batchRows = sizes.searchInsertBatchRows
    log("search-insert: searchable vs plain table, \(names.joined(separator: ", ")); each insert its own transaction (\(sizes.searchInsertAutocommitRows) per round, synchronous FULL and NORMAL, every contender and table taking turns insert by insert), and \(sizes.searchInsertBatchRows) rows 1,000 per transaction (a run each); article and short text; \(sizes.warmups) warm-up + \(sizes.searchInsertRounds) rounds, new files each round")

    var runs: [(contender: String, table: String)] = []
    for name in names { for table in ["plain", "searchable"] { runs.append((name, table)) } }

    /// A new file for `run`, and its contender on it, primed, with `synchronous`.
    func open(_ run: (contender: String, table: String), synchronous: String) throws -> (SearchInsertContender, String) {
        let path = directory.appendingPathComponent("search-insert-\(run.contender)-\(run.table).sqlite").path
        try createDatabase(at: path, statements: run.table == "plain" ? ddl.plain : ddl.searchable)
        let contender: SearchInsertContender
        switch (run.contender, run.table) {
        case ("raw-C", _): contender = try RawInsertContender(path: path)
        case ("ActiveObjects", "plain"): contender = try ActiveObjectsInsertContender(path: path, model: PlainArticle.self)
        case ("ActiveObjects", _): contender = try ActiveObjectsInsertContender(path: path, model: SearchArticle.self)
        case ("GRDB-hand", _): contender = try GRDBInsertContender(path: path)
        default: throw BenchError("unknown search-insert contender \(run.contender)")
        }
        try contender.execute("PRAGMA synchronous = \(synchronous)")
        try contender.prime()
        return (contender, path)
    }

    /// Untimed, after a run: the index holds every row.
    func checkIndex(_ path: String, rows: Int, _ run: (contender: String, table: String)) throws {
        guard run.table == "searchable" else { return }
        let connection = try RawConnection(path: path)
        defer { connection.close() }
        let indexed = try connection.prepare("SELECT count(*) FROM \"article_search\"")
        defer { sqlite3_finalize(indexed) }
        guard sqlite3_step(indexed) == SQLITE_ROW, Int(sqlite3_column_int64(indexed, 0)) == rows else {
            throw BenchError("search-insert: \(run.contender)'s index does not hold \(rows) rows")
        }
    }

    for text in ["article", "short"] {
        let most = modes.map(\.rows).max() ?? 0
        let articles = (0..<most).map { writer.article($0, short: text == "short") }
        for mode in modes {
            let seeds = Array(articles.prefix(mode.rows))
            var expected: Int?
            for round in 0..<(sizes.warmups + sizes.searchInsertRounds) {
                if mode.batch == nil {
                    // Each insert its own transaction: every contender and table open at once,
                    // taking turns insert by insert (the same moment for the disk), each insert
                    // timed on its own.
                    let opened = try runs.map { try open($0, synchronous: mode.synchronous) }
                    defer {
                        for (contender, path) in opened {
                            try? contender.close()
                            removeDatabaseFiles(path)
                        }
                    }
                    var checksums = [Int](repeating: 0, count: runs.count)
                    for (i, seed) in seeds.enumerated() {
                        for k in runs.indices {
                            let r = (k + i + round) % runs.count
                            let cpuStart = processCPUNanoseconds()
                            let start = monotonicNanoseconds()
                            checksums[r] &+= try opened[r].0.insert([seed], batch: nil)
                            let end = monotonicNanoseconds()
                            let cpu = Double(processCPUNanoseconds() - cpuStart) / 1000
                            if round >= sizes.warmups {
                                let key = InsertKey(contender: runs[r].contender, text: text, mode: mode.name, table: runs[r].table)
                                results.inserts[key, default: ([], [])].wall.append(Double(end - start) / 1000)
                                results.inserts[key, default: ([], [])].cpu.append(cpu)
                            }
                        }
                    }
                    for r in runs.indices {
                        if let expected, expected != checksums[r] {
                            throw BenchError("search-insert \(text) \(mode.name): \(runs[r].contender) \(runs[r].table) computed checksum \(checksums[r]), expected \(expected)")
                        }
                        expected = checksums[r]
                        if round == 0 { try checkIndex(opened[r].1, rows: seeds.count, runs[r]) }
                    }
                } else {
                    // 1,000 per transaction: one run at a time, the runs taking turns.
                    for k in runs.indices {
                        let run = runs[(k + round) % runs.count]
                        let (contender, path) = try open(run, synchronous: mode.synchronous)
                        defer {
                            try? contender.close()
                            removeDatabaseFiles(path)
                        }
                        let cpuStart = processCPUNanoseconds()
                        let (milliseconds, checksum) = try measure { try contender.insert(seeds, batch: mode.batch) }
                        let cpu = Double(processCPUNanoseconds() - cpuStart) / 1e6
                        if let expected, expected != checksum {
                            throw BenchError("search-insert \(text) \(mode.name): \(run.contender) \(run.table) computed checksum \(checksum), expected \(expected)")
                        }
                        expected = checksum
                        if round == 0 { try checkIndex(path, rows: seeds.count, run) }
                        if round >= sizes.warmups {
                            let key = InsertKey(contender: run.contender, text: text, mode: mode.name, table: run.table)
                            results.inserts[key, default: ([], [])].wall.append(milliseconds * 1000 / Double(seeds.count))
                            results.inserts[key, default: ([], [])].cpu.append(cpu * 1000 / Double(seeds.count))
                        }
                    }
                }
            }
            log("  search-insert \(text) \(mode.name): done")
        }
    }
}

// MARK: Report

let searchInsertModes = ["autocommit", "autocommit-normal", "batch1000"]
let searchInsertModeLabels = ["autocommit": "1 per insert", "autocommit-normal": "1 per insert, sync NORMAL",
                              "batch1000": "1,000 per transaction"]

/// The cost per row of one variant (µs): `wall` and `cpu` amortized (each-insert modes: the mean
/// of every insert, the occasional expensive one — an FTS5 segment merge, a checkpoint, a slow
/// fsync — included; batch: the median run ÷ its rows), and `typical`, the median insert
/// (each-insert modes only).
private func insertMedians(_ results: SearchResults, _ contender: String, _ text: String, _ mode: String,
                           _ table: String) -> (wall: Double, cpu: Double, typical: Double?, n: Int)? {
    guard let samples = results.inserts[InsertKey(contender: contender, text: text, mode: mode, table: table)],
          !samples.wall.isEmpty else { return nil }
    func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }
    if mode == "batch1000" {
        return (medianOf(samples.wall), medianOf(samples.cpu), nil, samples.wall.count)
    }
    return (mean(samples.wall), mean(samples.cpu), medianOf(samples.wall), samples.wall.count)
}

/// Per query, the median over rounds of `name`'s latency (ms; CPU time if `cpu`).
private func perQueryMedians(_ results: SearchResults, _ name: String, cpu: Bool = false) -> [Double]? {
    guard let all = (cpu ? results.cpu : results.latencies)[name], results.queries > 0, results.rounds > 0 else { return nil }
    return (0..<results.queries).map { q in medianOf((0..<results.rounds).map { all[$0 * results.queries + q] }) }
}

/// The median of the per-query differences `name` − `reference` (each query's median over rounds), µs.
private func pairedDifference(_ results: SearchResults, _ name: String, _ reference: String, cpu: Bool = false) -> Double? {
    guard let mine = perQueryMedians(results, name, cpu: cpu), let theirs = perQueryMedians(results, reference, cpu: cpu) else { return nil }
    return medianOf(zip(mine, theirs).map { ($0 - $1) * 1000 })
}

func printSearchLines(_ results: SearchResults) {
    func ms(_ v: Double) -> String { format(v, decimals: 3) }
    if !results.latencies.isEmpty {
        let matches = results.matches.map(Double.init)
        print("SEARCH search matches rows=\(results.rows) queries=\(results.queries) p50=\(Int(percentile(matches, 50))) p95=\(Int(percentile(matches, 95))) max=\(Int(matches.max() ?? 0)) mean=\(format(matches.reduce(0, +) / Double(max(1, matches.count)), decimals: 0))")
        for name in results.contenders {
            guard let values = results.latencies[name], !values.isEmpty else { continue }
            let cpu = results.cpu[name] ?? []
            var difference = ""
            if name != "raw-C", let wall = pairedDifference(results, name, "raw-C"), let cpu = pairedDifference(results, name, "raw-C", cpu: true) {
                difference = " vs_raw_C_us=\(format(wall, decimals: 1)) cpu_vs_raw_C_us=\(format(cpu, decimals: 1))"
            }
            print("SEARCH search \(name) p50=\(ms(percentile(values, 50))) p95=\(ms(percentile(values, 95))) p99=\(ms(percentile(values, 99))) max=\(ms(values.max()!)) mean=\(ms(values.reduce(0, +) / Double(values.count))) cpu_p50=\(ms(percentile(cpu, 50))) cpu_p95=\(ms(percentile(cpu, 95))) n=\(values.count)\(difference)")
        }
        print("SEARCH search count-only raw-C p50=\(ms(percentile(results.countMilliseconds, 50))) p95=\(ms(percentile(results.countMilliseconds, 95)))")
        print("SEARCH search prepare-us p50=\(format(percentile(results.prepareMicroseconds, 50), decimals: 1)) p95=\(format(percentile(results.prepareMicroseconds, 95), decimals: 1))")
    }
    for text in ["article", "short"] {
        for mode in searchInsertModes {
            for name in searchInsertContenderNames {
                guard let plain = insertMedians(results, name, text, mode, "plain"),
                      let searchable = insertMedians(results, name, text, mode, "searchable") else { continue }
                print("INSERT search-insert \(name) text=\(text) mode=\(mode) plain_us=\(format(plain.wall, decimals: 2)) searchable_us=\(format(searchable.wall, decimals: 2)) ratio=\(format(searchable.wall / plain.wall, decimals: 2)) cpu_plain_us=\(format(plain.cpu, decimals: 2)) cpu_searchable_us=\(format(searchable.cpu, decimals: 2)) cpu_ratio=\(format(searchable.cpu / plain.cpu, decimals: 2))\(plain.typical.map { " median_plain_us=\(format($0, decimals: 2))" } ?? "")\(searchable.typical.map { " median_searchable_us=\(format($0, decimals: 2))" } ?? "") n=\(plain.n)")
            }
        }
    }
}

func printSearchTables(_ results: SearchResults, sizes: Sizes) {
    func ms(_ v: Double) -> String { format(v, decimals: 2) }
    if !results.latencies.isEmpty {
        let matches = results.matches.map(Double.init)
        print("")
        print("Full-text search (issue 25): \(results.rows) articles (title 6–10 words, body 150–300, \(searchVocabulary.count)-word English vocabulary drawn by Zipf's law), \(format(results.fileMiB, decimals: 0)) MiB WAL file shared by the contenders (\(results.buildSeconds > 0 ? "built in \(format(results.buildSeconds, decimals: 0)) s" : "reused")); \(results.queries) queries typed from random articles (a word, then 3–6 letters of another; e.g. \(results.sampleQueries.prefix(4).map { "\"\($0)\"" }.joined(separator: ", "))), the \(searchLimit) best as objects; each query's latency, \(results.rounds) rounds, contenders taking turns query by query. The queries match p50 \(Int(percentile(matches, 50))), p95 \(Int(percentile(matches, 95))), max \(Int(matches.max() ?? 0)) rows, which bm25 ranks all before the limit:")
        print("")
        print("| contender | p50 ms | p95 ms | p99 ms | max ms | mean ms | CPU p50 ms | CPU p95 ms | per-query Δ vs raw-C (median) | CPU Δ | target p95 | verdict |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for name in results.contenders {
            guard let values = results.latencies[name], !values.isEmpty else { continue }
            let cpu = results.cpu[name] ?? []
            let p95 = percentile(values, 95)
            let difference = name == "raw-C" ? "–" : pairedDifference(results, name, "raw-C").map { "\(format($0, decimals: 0)) µs" } ?? "–"
            let cpuDifference = name == "raw-C" ? "–" : pairedDifference(results, name, "raw-C", cpu: true).map { "\(format($0, decimals: 0)) µs" } ?? "–"
            let label = results.differingQueries[name].map { $0 == 0 ? name : "\(name) (hits differ on \($0) queries)" } ?? name
            print("| \(label) | \(ms(percentile(values, 50))) | \(ms(p95)) | \(ms(percentile(values, 99))) | \(ms(values.max()!)) | \(ms(values.reduce(0, +) / Double(values.count))) | \(ms(percentile(cpu, 50))) | \(ms(percentile(cpu, 95))) | \(difference) | \(cpuDifference) | ≤ \(format(searchTargetP95Milliseconds, decimals: 0)) ms | \(p95 <= searchTargetP95Milliseconds ? "PASS" : "MISS") |")
        }
        // By how many rows the query matches: the cost follows the matches (bm25 ranks every one).
        let buckets: [(String, ClosedRange<Int>)] = [("≤ 100", 0...100), ("101–1,000", 101...1_000),
                                                      ("1,001–5,000", 1_001...5_000), ("> 5,000", 5_001...Int.max)]
        print("")
        print("The same latencies by the number of rows a query matches (p50 / p95 ms):")
        print("")
        print("| matches | queries | " + results.contenders.joined(separator: " | ") + " |")
        print("|---|---:|" + results.contenders.map { _ in "---:|" }.joined())
        for (label, range) in buckets {
            let indexes = results.matches.indices.filter { range.contains(results.matches[$0]) }
            guard !indexes.isEmpty else { continue }
            var line = "| \(label) | \(indexes.count) |"
            for name in results.contenders {
                guard let all = results.latencies[name] else { line += " – |"; continue }
                let values = (0..<results.rounds).flatMap { r in indexes.map { all[r * results.queries + $0] } }
                line += " \(ms(percentile(values, 50))) / \(ms(percentile(values, 95))) |"
            }
            print(line)
        }
        print("")
        print("The library's SQL (its trace): `\(results.librarySQL)`; plan: \(results.plan). Preparing it (sqlite3_prepare_v2, the pattern inlined, as the library does for every new search text): p50 \(format(percentile(results.prepareMicroseconds, 50), decimals: 1)) µs, p95 \(format(percentile(results.prepareMicroseconds, 95), decimals: 1)) µs. raw-C binds the pattern to one prepared statement; raw-C-prepared prepares and finalizes that statement for each query; raw-C-literal does the same with the library's SQL (the pattern inlined); raw-C-bm25 (a diagnostic: other SQL, same hits) ranks with `bm25()` in a subquery holding the limit, `\(bm25LimitSearchSQL)`, so that SQLite's sorter keeps 20 rows where FTS5's `rank` ordering sorts every match. Matching alone, without ranking (raw C, `SELECT count(*) … MATCH`, the same queries, one warm pass): p50 \(ms(percentile(results.countMilliseconds, 50))) ms, p95 \(ms(percentile(results.countMilliseconds, 95))) ms.")
    }
    guard !results.inserts.isEmpty else { return }
    print("")
    print("The index's cost on inserts (issue 25): µs per row, searchable table (FTS5 index kept by the library's 3 triggers) vs the same table without the index, new WAL files each round, synchronous = FULL for everyone (the library's default: one fsync per commit; “sync NORMAL”: the same inserts with synchronous = NORMAL, no fsync), the process's CPU time beside the wall time; \(results.insertRounds) rounds. Article: title 6–10 words, body 150–300; short: title and one sentence of 8–20 words. 1 per insert: \(results.autocommitRows) inserts a round, each its own transaction (what `save()` of a new object does), every contender and table taking turns insert by insert: the mean insert (the cost per row, with the occasional FTS5 segment merge, checkpoint or slow fsync), and the median insert beside it; 1,000 per transaction: \(results.batchRows) inserts a run, the median run ÷ rows. The verdict is on the wall time per row:")
    print("")
    print("| text | transactions | contender | plain µs/row | searchable µs/row | ratio | added µs/row | median insert plain / searchable | CPU plain | CPU searchable | CPU ratio | target | verdict |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for text in ["article", "short"] {
        for mode in searchInsertModes {
            for name in searchInsertContenderNames {
                guard let plain = insertMedians(results, name, text, mode, "plain"),
                      let searchable = insertMedians(results, name, text, mode, "searchable") else { continue }
                let ratio = searchable.wall / plain.wall
                print("| \(text) | \(searchInsertModeLabels[mode] ?? mode) | \(name) | \(format(plain.wall, decimals: 1)) | \(format(searchable.wall, decimals: 1)) | \(format(ratio, decimals: 2))× | \(format(searchable.wall - plain.wall, decimals: 1)) | \(plain.typical.map { format($0, decimals: 1) } ?? "–") / \(searchable.typical.map { format($0, decimals: 1) } ?? "–") | \(format(plain.cpu, decimals: 1)) | \(format(searchable.cpu, decimals: 1)) | \(format(searchable.cpu / plain.cpu, decimals: 2))× | ≤ \(format(searchInsertTargetRatio, decimals: 0))× | \(ratio <= searchInsertTargetRatio ? "PASS" : "MISS") |")
            }
        }
    }
    // What the library adds over raw C, same table, same mode.
    print("")
    print("What ActiveObjects and GRDB add over raw-C, same table and mode: CPU µs per row (wall µs in parentheses, which fsync times dominate in autocommit):")
    print("")
    print("| text | transactions | ActiveObjects plain | ActiveObjects searchable | GRDB-hand plain | GRDB-hand searchable |")
    print("|---|---|---:|---:|---:|---:|")
    for text in ["article", "short"] {
        for mode in searchInsertModes {
            guard let rawPlain = insertMedians(results, "raw-C", text, mode, "plain"),
                  let rawSearchable = insertMedians(results, "raw-C", text, mode, "searchable") else { continue }
            func delta(_ name: String, _ table: String, _ reference: (wall: Double, cpu: Double, typical: Double?, n: Int)) -> String {
                insertMedians(results, name, text, mode, table).map {
                    "\(format($0.cpu - reference.cpu, decimals: 1)) (\(format($0.wall - reference.wall, decimals: 1)))"
                } ?? "–"
            }
            print("| \(text) | \(searchInsertModeLabels[mode] ?? mode) | \(delta("ActiveObjects", "plain", rawPlain)) | \(delta("ActiveObjects", "searchable", rawSearchable)) | \(delta("GRDB-hand", "plain", rawPlain)) | \(delta("GRDB-hand", "searchable", rawSearchable)) |")
        }
    }
}
