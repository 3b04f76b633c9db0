import CSQLiteBench

// The reference: hand-written sqlite3 C-API code filling a Swift final class with plain vars.
// Statements are prepared once and kept (as a careful hand-written app would), the
// connection is opened without SQLite's mutex (one thread uses it), text is bound
// SQLITE_TRANSIENT and read with its byte length.

final class RawItem {
    var id: Int64?
    var intA = 0
    var intB = 0
    var intC = 0
    var realA = 0.0
    var realB = 0.0
    var textA = ""
    var textB = ""
    var textC = ""
    var note: String?
    var active = false
}

/// A thin owner of one sqlite3 connection, also used (outside the timed sections) to create
/// and populate every contender's database file.
final class RawConnection {
    let handle: OpaquePointer

    init(path: String) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            sqlite3_close(db)
            throw BenchError("cannot open \(path): \(code)")
        }
        handle = db
        try execute("PRAGMA journal_mode = WAL")
    }

    func close() { sqlite3_close(handle) }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "?"
            sqlite3_free(message)
            throw BenchError("\(sql): \(text)")
        }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
              let statement else {
            throw BenchError("prepare \(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        return statement
    }

    func error(_ what: String) -> BenchError {
        BenchError("\(what): \(String(cString: sqlite3_errmsg(handle)))")
    }

    /// Writes `count` rows from the seeded generator in one transaction (setup only; the
    /// seeds are made on the fly so that a million rows need no memory).
    func populate(count: Int, seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let statement = try prepare(RawContender.insertSQL)
        defer { sqlite3_finalize(statement) }
        try execute("BEGIN IMMEDIATE")
        for _ in 0..<count {
            let item = ItemSeed.make(using: &rng)
            RawContender.bind(statement, item.intA, item.intB, item.intC, item.realA, item.realB,
                              item.textA, item.textB, item.textC, item.note, item.active)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw error("populate") }
            sqlite3_reset(statement)
        }
        try execute("COMMIT")
    }
}

final class RawContender: Contender {
    let name = "raw-C"
    private let connection: RawConnection
    private let insertStatement: OpaquePointer
    private let selectAllStatement: OpaquePointer
    private let findStatement: OpaquePointer
    private let ordersStatement: OpaquePointer

    static let insertSQL = """
        INSERT INTO item (intA, intB, intC, realA, realB, textA, textB, textC, note, active) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let selectSQL = "SELECT id, intA, intB, intC, realA, realB, textA, textB, textC, note, active FROM item"

    init(path: String) throws {
        connection = try RawConnection(path: path)
        insertStatement = try connection.prepare(Self.insertSQL)
        selectAllStatement = try connection.prepare(Self.selectSQL)
        findStatement = try connection.prepare(Self.selectSQL + " WHERE id = ?")
        ordersStatement = try connection.prepare(selectOrdersSQL)
    }

    func close() throws {
        sqlite3_finalize(insertStatement)
        sqlite3_finalize(selectAllStatement)
        sqlite3_finalize(findStatement)
        sqlite3_finalize(ordersStatement)
        connection.close()
    }

    func execute(_ sql: String) throws { try connection.execute(sql) }

    // MARK: Writing

    @inline(__always)
    static func bind(_ s: OpaquePointer, _ intA: Int, _ intB: Int, _ intC: Int, _ realA: Double, _ realB: Double,
                     _ textA: String, _ textB: String, _ textC: String, _ note: String?, _ active: Bool) {
        let transient = bench_sqlite_transient()
        sqlite3_bind_int64(s, 1, Int64(intA))
        sqlite3_bind_int64(s, 2, Int64(intB))
        sqlite3_bind_int64(s, 3, Int64(intC))
        sqlite3_bind_double(s, 4, realA)
        sqlite3_bind_double(s, 5, realB)
        sqlite3_bind_text(s, 6, textA, -1, transient)
        sqlite3_bind_text(s, 7, textB, -1, transient)
        sqlite3_bind_text(s, 8, textC, -1, transient)
        if let note { sqlite3_bind_text(s, 9, note, -1, transient) } else { sqlite3_bind_null(s, 9) }
        sqlite3_bind_int64(s, 10, active ? 1 : 0)
    }

    func insert(_ seeds: [ItemSeed]) throws -> Int {
        let s = insertStatement
        var checksum = 0
        try connection.execute("BEGIN IMMEDIATE")
        for seed in seeds {
            let item = RawItem()
            item.intA = seed.intA
            item.intB = seed.intB
            item.intC = seed.intC
            item.realA = seed.realA
            item.realB = seed.realB
            item.textA = seed.textA
            item.textB = seed.textB
            item.textC = seed.textC
            item.note = seed.note
            item.active = seed.active
            Self.bind(s, item.intA, item.intB, item.intC, item.realA, item.realB,
                      item.textA, item.textB, item.textC, item.note, item.active)
            guard sqlite3_step(s) == SQLITE_DONE else {
                sqlite3_reset(s)
                throw connection.error("insert")
            }
            sqlite3_reset(s)
            item.id = sqlite3_last_insert_rowid(connection.handle)
            checksum &+= Int(item.id!)
        }
        try connection.execute("COMMIT")
        return checksum
    }

    // MARK: Reading

    @inline(__always)
    private static func text(_ s: OpaquePointer, _ index: Int32) -> String {
        guard let bytes = sqlite3_column_text(s, index) else { return "" }
        let count = Int(sqlite3_column_bytes(s, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    @inline(__always)
    static func read(_ s: OpaquePointer) -> RawItem {
        let item = RawItem()
        item.id = sqlite3_column_int64(s, 0)
        item.intA = Int(sqlite3_column_int64(s, 1))
        item.intB = Int(sqlite3_column_int64(s, 2))
        item.intC = Int(sqlite3_column_int64(s, 3))
        item.realA = sqlite3_column_double(s, 4)
        item.realB = sqlite3_column_double(s, 5)
        item.textA = text(s, 6)
        item.textB = text(s, 7)
        item.textC = text(s, 8)
        item.note = sqlite3_column_type(s, 9) == SQLITE_NULL ? nil : text(s, 9)
        item.active = sqlite3_column_int64(s, 10) != 0
        return item
    }

    @inline(__always)
    private static func checksum(_ item: RawItem) -> Int {
        rowChecksum(id: item.id!, intA: item.intA, realA: item.realA, textA: item.textA,
                    note: item.note, active: item.active)
    }

    func fetchAll() throws -> Int {
        let s = selectAllStatement
        defer { sqlite3_reset(s) }
        var items: [RawItem] = []
        while true {
            let code = sqlite3_step(s)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw connection.error("fetch") }
            items.append(Self.read(s))
        }
        return items.reduce(0) { $0 &+ Self.checksum($1) }
    }

    func find(ids: [Int64]) throws -> Int {
        let s = findStatement
        var checksum = 0
        for id in ids {
            sqlite3_bind_int64(s, 1, id)
            let code = sqlite3_step(s)
            var item: RawItem?
            if code == SQLITE_ROW {
                item = Self.read(s)
            } else if code != SQLITE_DONE {
                sqlite3_reset(s)
                throw connection.error("find")
            }
            sqlite3_reset(s)
            if let item { checksum &+= Self.checksum(item) }
        }
        return checksum
    }

    /// Calls `body` with each row as a fresh object.
    @inline(__always)
    private func forEachItem(_ body: (RawItem) -> Void) throws {
        let s = selectAllStatement
        defer { sqlite3_reset(s) }
        while true {
            let code = sqlite3_step(s)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw connection.error("each") }
            body(Self.read(s))
        }
    }

    func fetchOrders() throws -> Int {
        let orders = try RawOrderReading.fetchAll(ordersStatement, connection, RawOrderReading.order)
        return orders.reduce(0) { $0 &+ $1.checksum }
    }

    func fetchOrdersAsText() throws -> Int {
        let orders = try RawOrderReading.fetchAll(ordersStatement, connection, RawOrderReading.orderText)
        return orders.reduce(0) { $0 &+ $1.checksum }
    }

    func orderFields(text: Bool) throws -> [[String]] {
        text ? try RawOrderReading.fetchAll(ordersStatement, connection, RawOrderReading.orderText).map(\.fields)
            : try RawOrderReading.fetchAll(ordersStatement, connection, RawOrderReading.order).map(\.fields)
    }

    func each() throws -> Int {
        var checksum = 0
        try forEachItem { checksum &+= Self.checksum($0) }
        return checksum
    }

    func cursor() throws -> Int {
        let cursor = RawCursor(statement: try connection.prepare(Self.selectSQL), connection: connection)
        var checksum = 0
        while let item = try cursor.next() { checksum &+= Self.checksum(item) }
        return checksum
    }
}

/// A hand-written pull cursor over its own statement.
final class RawCursor {
    private var statement: OpaquePointer?
    private let connection: RawConnection

    init(statement: OpaquePointer, connection: RawConnection) {
        self.statement = statement
        self.connection = connection
    }

    func next() throws -> RawItem? {
        guard let s = statement else { return nil }
        switch sqlite3_step(s) {
        case SQLITE_ROW:
            return RawContender.read(s)
        case SQLITE_DONE:
            sqlite3_finalize(s)
            statement = nil
            return nil
        default:
            let error = connection.error("cursor")
            sqlite3_finalize(s)
            statement = nil
            throw error
        }
    }

    deinit { if let statement { sqlite3_finalize(statement) } }
}
