import GRDB

// GRDB 7.10.0, two ways: a Codable record (the synthesized conformances), and a record
// written by hand (`init(row:)` reading by index, `encode(to:)`). Both are structs adopting
// FetchableRecord & MutablePersistableRecord, the form GRDB documents for auto-incremented
// ids (`didInsert` stores the new id, as the other contenders do on their objects).
//
// One DatabaseQueue per contender, WAL, GRDB's default configuration otherwise. Every read
// runs in `read`, as GRDB documents. For the lookups that puts all 20,000 in one read
// transaction where the other contenders run one autocommit statement per lookup; it makes
// no measurable difference to GRDB (`inDatabase`, autocommit per lookup, measured the same),
// whose time goes into building the `fetchOne(db, key:)` request.

/// What the generic GRDB contender needs from its record type.
protocol BenchRecord: FetchableRecord, MutablePersistableRecord {
    /// The `Orders` record of the same kind, with `Date?` dates and `Decimal?` freight.
    associatedtype Order: OrderRecord
    /// The `Orders` record of the same kind, with `String?` dates and `Double?` freight.
    associatedtype OrderText: OrderRecord
    init(seed: ItemSeed)
    var checksum: Int { get }
    var id: Int64? { get }
}

struct CodableItem: Codable, BenchRecord {
    typealias Order = CodableOrder
    typealias OrderText = CodableOrderText
    static let databaseTableName = "item"
    var id: Int64?
    var intA: Int
    var intB: Int
    var intC: Int
    var realA: Double
    var realB: Double
    var textA: String
    var textB: String
    var textC: String
    var note: String?
    var active: Bool

    init(seed: ItemSeed) {
        id = nil
        intA = seed.intA; intB = seed.intB; intC = seed.intC
        realA = seed.realA; realB = seed.realB
        textA = seed.textA; textB = seed.textB; textC = seed.textC
        note = seed.note; active = seed.active
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    var checksum: Int {
        rowChecksum(id: id!, intA: intA, realA: realA, textA: textA, note: note, active: active)
    }
}

struct HandItem: BenchRecord {
    typealias Order = HandOrder
    typealias OrderText = HandOrderText
    static let databaseTableName = "item"
    var id: Int64?
    var intA: Int
    var intB: Int
    var intC: Int
    var realA: Double
    var realB: Double
    var textA: String
    var textB: String
    var textC: String
    var note: String?
    var active: Bool

    init(seed: ItemSeed) {
        id = nil
        intA = seed.intA; intB = seed.intB; intC = seed.intC
        realA = seed.realA; realB = seed.realB
        textA = seed.textA; textB = seed.textB; textC = seed.textC
        note = seed.note; active = seed.active
    }

    /// Reads by index (GRDB's fastest documented form); `SELECT *` follows the table's order.
    init(row: Row) throws {
        id = row[0]
        intA = row[1]
        intB = row[2]
        intC = row[3]
        realA = row[4]
        realB = row[5]
        textA = row[6]
        textB = row[7]
        textC = row[8]
        note = row[9]
        active = row[10]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["intA"] = intA
        container["intB"] = intB
        container["intC"] = intC
        container["realA"] = realA
        container["realB"] = realB
        container["textA"] = textA
        container["textB"] = textB
        container["textC"] = textC
        container["note"] = note
        container["active"] = active
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    var checksum: Int {
        rowChecksum(id: id!, intA: intA, realA: realA, textA: textA, note: note, active: active)
    }
}

final class GRDBContender<Record: BenchRecord>: Contender {
    let name: String
    let queue: DatabaseQueue

    init(name: String, path: String) throws {
        self.name = name
        var configuration = Configuration()
        configuration.journalMode = .wal
        queue = try DatabaseQueue(path: path, configuration: configuration)
    }

    func close() throws { try queue.close() }

    func execute(_ sql: String) throws {
        try queue.writeWithoutTransaction { try $0.execute(sql: sql) }
    }

    func insert(_ seeds: [ItemSeed]) throws -> Int {
        try queue.write { db in
            var checksum = 0
            for seed in seeds {
                var record = Record(seed: seed)
                try record.insert(db)
                checksum &+= Int(record.id!)
            }
            return checksum
        }
    }

    func fetchAll() throws -> Int {
        let records = try queue.read { db in try Record.fetchAll(db) }
        return records.reduce(0) { $0 &+ $1.checksum }
    }

    func find(ids: [Int64]) throws -> Int {
        try queue.read { db in
            var checksum = 0
            for id in ids {
                if let record = try Record.fetchOne(db, key: id) { checksum &+= record.checksum }
            }
            return checksum
        }
    }

    func each() throws -> Int {
        try queue.read { db in
            var checksum = 0
            try Record.fetchCursor(db).forEach { checksum &+= $0.checksum }
            return checksum
        }
    }

    func cursor() throws -> Int {
        try queue.read { db in
            let cursor = try Record.fetchCursor(db)
            var checksum = 0
            while let record = try cursor.next() { checksum &+= record.checksum }
            return checksum
        }
    }
}
