import ActiveObjects
import CSQLiteBench
import GRDB

// The contenders of the concurrency workloads, each on its own WAL file with the same `item`
// table:
//
// - raw-C: hand-written sqlite3 code, one connection per reading thread (opened up front, one
//   prepared lookup statement each) and one connection for the writer;
// - ActiveObjects: ONE shared `Database` with default options, used from every thread through
//   the models (`Item.find(id:)`, `save()` in `db.transaction`), as an app or server would;
// - GRDB-pool: one GRDB `DatabasePool` (default configuration) and the hand-written record;
//   every lookup is its own `pool.read { }` (independent requests, like the others' calls),
//   the write one `pool.write { }`.

/// A contender of the concurrency workloads. Safe to call from several threads at once, each
/// with its own `thread` number (0 ..< ``concurrencyThreadLimit``).
protocol ConcurrentContender: AnyObject, Sendable {
    var name: String { get }
    /// Looks up each id (each lookup its own read), on the reading thread numbered `thread`;
    /// sums the checksums of the rows found.
    func find(ids: [Int64], thread: Int) throws -> Int
    /// Inserts one row per seed in ONE write transaction; sums the new ids.
    func writeTransaction(_ seeds: [ItemSeed]) throws -> Int
    /// One lookup from `@MainActor` code with the library's async form, the row's checksum
    /// (0 when not found; nil: the contender has no async form).
    @MainActor func findAsync(id: Int64) async throws -> Int?
    /// Executes SQL on the writer, outside timed sections.
    func execute(_ sql: String) throws
    func close() throws
    /// read-threads: this contender does 1/`lookupDivisor` of the lookups per thread (the
    /// slow ones, to keep the run short; rates are per second, so they still compare).
    var lookupDivisor: Int { get }
}

extension ConcurrentContender {
    var lookupDivisor: Int { 1 }
}

/// The most reading threads a workload uses.
let concurrencyThreadLimit = 4

let concurrentContenderNames = ["raw-C", "ActiveObjects", "GRDB-pool"]

func makeConcurrentContender(_ name: String, path: String) throws -> ConcurrentContender {
    switch name {
    case "raw-C": return try RawConcurrentContender(path: path)
    case "ActiveObjects": return try ActiveObjectsConcurrentContender(path: path)
    case "GRDB-pool": return try GRDBPoolContender(path: path)
    default: throw BenchError("unknown concurrency contender \(name)")
    }
}

// MARK: raw-C

final class RawConcurrentContender: ConcurrentContender, @unchecked Sendable {
    // Safety of @unchecked Sendable: reader connection `i` (and its statement) is only used by
    // the thread numbered `i`; the writer connection only by the one writing thread.
    let name = "raw-C"
    private let readers: [RawConnection]
    private let findStatements: [OpaquePointer]
    private let writer: RawConnection
    private let insertStatement: OpaquePointer

    init(path: String) throws {
        writer = try RawConnection(path: path)
        insertStatement = try writer.prepare(RawContender.insertSQL)
        readers = try (0..<concurrencyThreadLimit).map { _ in try RawConnection(path: path) }
        findStatements = try readers.map { try $0.prepare(RawContender.selectSQL + " WHERE id = ?") }
    }

    func close() throws {
        findStatements.forEach { sqlite3_finalize($0) }
        sqlite3_finalize(insertStatement)
        readers.forEach { $0.close() }
        writer.close()
    }

    func execute(_ sql: String) throws { try writer.execute(sql) }

    func find(ids: [Int64], thread: Int) throws -> Int {
        let s = findStatements[thread]
        var checksum = 0
        for id in ids {
            sqlite3_bind_int64(s, 1, id)
            let code = sqlite3_step(s)
            var item: RawItem?
            if code == SQLITE_ROW {
                item = RawContender.read(s)
            } else if code != SQLITE_DONE {
                sqlite3_reset(s)
                throw readers[thread].error("find")
            }
            sqlite3_reset(s)
            if let item {
                checksum &+= rowChecksum(id: item.id!, intA: item.intA, realA: item.realA, textA: item.textA,
                                         note: item.note, active: item.active)
            }
        }
        return checksum
    }

    func writeTransaction(_ seeds: [ItemSeed]) throws -> Int {
        let s = insertStatement
        var checksum = 0
        try writer.execute("BEGIN IMMEDIATE")
        for seed in seeds {
            RawContender.bind(s, seed.intA, seed.intB, seed.intC, seed.realA, seed.realB,
                              seed.textA, seed.textB, seed.textC, seed.note, seed.active)
            guard sqlite3_step(s) == SQLITE_DONE else {
                sqlite3_reset(s)
                try? writer.execute("ROLLBACK")
                throw writer.error("insert")
            }
            sqlite3_reset(s)
            checksum &+= Int(sqlite3_last_insert_rowid(writer.handle))
        }
        try writer.execute("COMMIT")
        return checksum
    }

    @MainActor func findAsync(id: Int64) async throws -> Int? { nil }
}

// MARK: ActiveObjects

final class ActiveObjectsConcurrentContender: ConcurrentContender {
    let name = "ActiveObjects"
    let database: ActiveObjects.Database

    init(path: String) throws {
        database = try ActiveObjects.Database(path: path)   // default options: WAL, up to 4 readers
        ActiveObject.defaultDatabase = database
    }

    func close() throws {
        ActiveObject.defaultDatabase = nil
        try database.close()
    }

    func execute(_ sql: String) throws { try database.execute(sql) }

    static func checksum(_ item: Item) -> Int {
        rowChecksum(id: item.id!, intA: item.intA, realA: item.realA, textA: item.textA,
                    note: item.note, active: item.active)
    }

    func find(ids: [Int64], thread: Int) throws -> Int {
        var checksum = 0
        for id in ids {
            if let item = try Item.find(id: id) { checksum &+= Self.checksum(item) }
        }
        return checksum
    }

    func writeTransaction(_ seeds: [ItemSeed]) throws -> Int {
        try database.transaction {
            var checksum = 0
            for seed in seeds {
                let item = Item(seed: seed)
                try item.save()
                checksum &+= Int(item.id!)
            }
            return checksum
        }
    }

    @MainActor func findAsync(id: Int64) async throws -> Int? {
        try await Item.find(id: id).map(Self.checksum) ?? 0
    }
}

extension Item {
    /// A new, unsaved item with the seed's values.
    convenience init(seed: ItemSeed) {
        self.init()
        intA = seed.intA
        intB = seed.intB
        intC = seed.intC
        realA = seed.realA
        realB = seed.realB
        textA = seed.textA
        textB = seed.textB
        textC = seed.textC
        note = seed.note
        active = seed.active
    }
}

// MARK: GRDB

final class GRDBPoolContender: ConcurrentContender {
    let name = "GRDB-pool"
    let pool: DatabasePool
    /// About 10× slower per lookup than the others here: a quarter of their lookups.
    var lookupDivisor: Int { 4 }

    init(path: String) throws {
        pool = try DatabasePool(path: path)   // default configuration: WAL, up to 5 readers
    }

    func close() throws { try pool.close() }

    func execute(_ sql: String) throws {
        try pool.writeWithoutTransaction { try $0.execute(sql: sql) }
    }

    func find(ids: [Int64], thread: Int) throws -> Int {
        var checksum = 0
        for id in ids {
            if let record = try pool.read({ db in try HandItem.fetchOne(db, key: id) }) {
                checksum &+= record.checksum
            }
        }
        return checksum
    }

    func writeTransaction(_ seeds: [ItemSeed]) throws -> Int {
        try pool.write { db in
            var checksum = 0
            for seed in seeds {
                var record = HandItem(seed: seed)
                try record.insert(db)
                checksum &+= Int(record.id!)
            }
            return checksum
        }
    }

    @MainActor func findAsync(id: Int64) async throws -> Int? {
        try await pool.read { db in try HandItem.fetchOne(db, key: id)?.checksum ?? 0 }
    }
}
