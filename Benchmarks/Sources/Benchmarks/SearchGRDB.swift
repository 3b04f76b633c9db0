import GRDB

// The GRDB contenders of the search workloads (SearchWorkloads.swift): a file of its own, as
// GRDB and ActiveObjects both name a type `Database`.

/// A GRDB record of the same table, written by hand (`init(row:)` by index, `encode(to:)`).
struct GRDBArticle: FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "article"
    var id: Int64?
    var title: String
    var body: String

    init(title: String, body: String) {
        self.title = title
        self.body = body
    }

    /// The select list is `id, title, body` (checked before the rounds).
    init(row: GRDB.Row) throws {
        id = row[0]
        title = row[1]
        body = row[2]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["title"] = title
        container["body"] = body
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

final class GRDBSearchContender: SearchContender {
    let name = "GRDB-hand"
    private let queue: DatabaseQueue
    private let sql: String

    init(path: String, sql: SearchSQL) throws {
        var configuration = Configuration()
        configuration.journalMode = .wal
        queue = try DatabaseQueue(path: path, configuration: configuration)
        self.sql = sql.bound
    }

    func close() throws { try queue.close() }

    func search(_ query: SearchQuery) throws -> Int {
        let request = SQLRequest<GRDBArticle>(sql: sql, arguments: [query.pattern, searchLimit], cached: true)
        let hits = try queue.read { db in try request.fetchAll(db) }
        var checksum = 0
        for (i, hit) in hits.enumerated() { checksum &+= hitChecksum(position: i, id: hit.id!, title: hit.title, body: hit.body) }
        return checksum
    }
}

final class GRDBInsertContender: SearchInsertContender {
    let name = "GRDB-hand"
    private let queue: DatabaseQueue

    init(path: String) throws {
        var configuration = Configuration()
        configuration.journalMode = .wal
        queue = try DatabaseQueue(path: path, configuration: configuration)
        // The library's default (SQLite's): an fsync per commit in WAL mode. GRDB sets NORMAL.
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
    }

    func close() throws { try queue.close() }

    func execute(_ sql: String) throws { try queue.writeWithoutTransaction { try $0.execute(sql: sql) } }

    func prime() throws {
        try queue.write { db in
            var record = GRDBArticle(title: "Prime", body: "One row.")
            try record.insert(db)
            _ = try record.delete(db)
        }
    }

    func insert(_ articles: [SearchArticleText], batch: Int?) throws -> Int {
        guard let batch else {
            var checksum = 0
            for text in articles {
                var record = GRDBArticle(title: text.title, body: text.body)
                try queue.write { db in try record.insert(db) }
                checksum &+= Int(record.id!)
            }
            return checksum
        }
        var checksum = 0
        var start = 0
        while start < articles.count {
            let end = min(articles.count, start + batch)
            checksum &+= try queue.write { db in
                var sum = 0
                for text in articles[start..<end] {
                    var record = GRDBArticle(title: text.title, body: text.body)
                    try record.insert(db)
                    sum &+= Int(record.id!)
                }
                return sum
            }
            start = end
        }
        return checksum
    }
}
