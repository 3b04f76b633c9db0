import CSQLite
import Foundation

/// A row's identity in a live result: its rowid (or `INTEGER PRIMARY KEY`), or its natural or
/// composite key's values. A row read without a key gets a number of its own each time.
enum RowKey: Hashable, Sendable {
    case rowID(Int64)
    case values([DatabaseValue])
    case unidentified(Int)
}

/// What the background side of a live result hands to its consumer: the order of the rows
/// (nil when unchanged since the last delivery) and a fresh object for each row that entered
/// or whose values changed. The consumer takes it whole (``LiveResultsObservation/take()``);
/// deliveries it has not taken yet are merged, newest values winning.
struct LiveDelivery {
    var keys: [RowKey]?
    var loaded: [RowKey: ActiveObject]
    /// Whether the loaded objects carry their relations (`including`), which replace those of
    /// the objects kept.
    var carriesRelations: Bool
    /// Whether the rows or relations read differ from the last read's (`including`): every
    /// object kept counts as updated, since its relations were replaced.
    var relationsChanged = false

    mutating func merge(_ newer: LiveDelivery) {
        if let keys = newer.keys { self.keys = keys }
        loaded.merge(newer.loaded) { _, newest in newest }
        carriesRelations = carriesRelations || newer.carriesRelations
        relationsChanged = relationsChanged || newer.relationsChanged
    }
}

/// The background side of `changes()` and `liveResults()` (§17): after each commit that may
/// change the result, reads what changed — not the whole result — and delivers it.
///
/// Three ways to read, cheapest first:
/// - **The changed rows** (a commit of this `Database`, with the rows its update hook
///   reported, ``CommittedRows``): `SELECT … WHERE rowid IN (changed) AND <filters>`. SQLite
///   evaluates the filters; a row still in the result whose ORDER BY values are the same bytes
///   as before keeps its place. Anything else (a row entering, a row's order values changing, a
///   row leaving a result with a LIMIT…) needs the next way. Only for a rowid table read alone
///   (no `joining`, no subquery of another table), whose schema has no `REPLACE`.
/// - **The keys** (another connection's commit, or the above could not decide): the query
///   itself, stepped without making objects; each row's key, a hash of its values and of its
///   ORDER BY values are compared with the last read; only rows that entered or whose hash
///   changed become objects. Order, filters, limit: all SQLite's.
/// - **Everything** (queries with `including`): the query with its relations, whose objects
///   the consumer's absorb in place.
final class LiveResultsObservation<Model: ActiveObject>: LiveObservation, @unchecked Sendable {
    // Safety of @unchecked Sendable: `pendingRowIDs`, `rowsUnknown` and `mailbox` are guarded
    // by `lock`; the tracker state (`keys`, `hashes`, `rowLevel`, `loadedOnce`) is touched only
    // by the fetch, which runs on one thread at a time (``LiveObservation``). Objects in a delivery
    // are made by the fetch, referenced by nothing else, and handed whole to the consumer.
    private let query: Query<Model>
    private let doorbell: AsyncThrowingStream<Void, Error>.Continuation

    // Guarded by `lock`.
    private var pendingRowIDs = Set<Int64>()
    private var rowsUnknown = true
    private var mailbox: LiveDelivery?

    /// What the fetches read so far (tests: a commit that changed k rows reads about k rows).
    struct ReadCounts: Equatable {
        /// Reads of the changed rows alone, of the keys, of everything.
        var changedRows = 0, keys = 0, everything = 0
        /// Rows stepped through, by all reads.
        var rows = 0
    }
    var readCounts: ReadCounts { lock.withLock { counts } }
    private var counts = ReadCounts()

    // The fetch's own.
    private struct RowHashes: Equatable {
        var row: Int
        var order: Int
    }
    private var keys: [RowKey] = []
    private var hashes: [RowKey: RowHashes] = [:]
    private var loadedOnce = false
    /// Whether the changed rows alone can be read (see the type's documentation).
    private var rowLevel = false
    private var unidentifiedCount = 0

    init(database: Database, query: Query<Model>, doorbell: AsyncThrowingStream<Void, Error>.Continuation) {
        self.query = query
        self.doorbell = doorbell
        tableKey = (try? ModelSchema.of(Model.self).tableName.lowercased()) ?? ""
        super.init(database: database)
        doorbell.onTermination = { [weak self] _ in self?.cancel() }
    }

    override var wantsRowChanges: Bool { query.preloaders.isEmpty }

    override func tablesChanged(_ rows: CommittedRows?) {
        lock.withLock {
            if let rows, !rowsUnknown {
                if let changed = rows.rowIDs[tableKey] { pendingRowIDs.formUnion(changed) }
            } else {
                rowsUnknown = true
                pendingRowIDs.removeAll()
            }
        }
        super.tablesChanged(rows)
    }

    override func externalChange() {
        lock.withLock {
            rowsUnknown = true
            pendingRowIDs.removeAll()
        }
        super.externalChange()
    }

    override func finishDelivery(throwing error: Error) {
        doorbell.finish(throwing: error)
    }

    /// The model's table name, lowercased (the key of ``CommittedRows``).
    private let tableKey: String

    /// What the consumer has not taken yet, taken whole.
    func take() -> LiveDelivery? {
        lock.withLock {
            defer { mailbox = nil }
            return mailbox
        }
    }

    /// The consumer found a row it cannot place (a delivery it never received): the next
    /// fetch reads every row again.
    func resynchronize() {
        lock.withLock {
            rowsUnknown = true
            resyncRequested = true
        }
        request(.tables)
    }
    private var resyncRequested = false

    private func deliver(_ delivery: LiveDelivery) {
        lock.withLock {
            if mailbox == nil { mailbox = delivery } else { mailbox!.merge(delivery) }
        }
        doorbell.yield(())
    }

    // MARK: Fetching

    override func fetchAndDeliver(_ reason: Reason) throws -> Set<String>? {
        let (changedRows, resync): (Set<Int64>?, Bool) = lock.withLock {
            defer {
                pendingRowIDs.removeAll()
                rowsUnknown = false
                resyncRequested = false
            }
            return (rowsUnknown ? nil : pendingRowIDs, resyncRequested)
        }
        if resync {
            keys = []
            hashes = [:]
        }
        if let changedRows, changedRows.isEmpty, loadedOnce, rowLevel, !resync {
            // Nothing of the table changed (an extra wake-up): nothing to read — and no read
            // to learn tables from, so the center keeps routing by the last read's.
            return nil
        }
        let readsEverything = !query.preloaders.isEmpty
        let (found, read, fingerprint) = try database.observedRead(fingerprinting: readsEverything) { connection -> LiveDelivery? in
            if !query.preloaders.isEmpty { return try readEverything() }
            if let changedRows, loadedOnce, rowLevel {
                do {
                    return try readChangedRows(changedRows, on: connection)
                } catch is NeedsKeys {
                    // Read the keys below.
                }
            }
            let delivery = try readKeys(on: connection)
            keysRead = true
            return delivery
        }
        if keysRead {
            // The changed rows alone decide only for a query that reads its table alone.
            let table = tableKey
            rowLevel = replaceFree && read.allSatisfy { name in
                let name = name.lowercased()
                return name == table || name.hasPrefix("sqlite_") || name == "json_each"
            }
            keysRead = false
        }
        var delivery = found
        if readsEverything {
            // Deliver only what differs from the last read (rows and relations alike).
            let first = lastFingerprint == nil
            if let last = lastFingerprint, last == fingerprint { delivery = nil }
            if !first { delivery?.relationsChanged = true }
            lastFingerprint = fingerprint
        }
        if let delivery { deliver(delivery) }
        return read
    }
    private var keysRead = false
    private var lastFingerprint: (value: UInt64, rows: Int)?
    /// Whether neither the model's table nor a trigger mentions REPLACE (see the type).
    private var replaceFree = false

    /// The query with its relations: every row becomes a fresh object, absorbed in place by
    /// the consumer.
    private func readEverything() throws -> LiveDelivery? {
        let objects = try query.all()
        lock.withLock {
            counts.everything += 1
            counts.rows += objects.count
        }
        let schema = try ModelSchema.of(Model.self)
        var newKeys: [RowKey] = []
        var loaded: [RowKey: ActiveObject] = [:]
        for object in objects {
            let key = try rowKey(of: object, schema: schema)
            newKeys.append(key)
            loaded[key] = object
        }
        loadedOnce = true
        keys = newKeys
        return LiveDelivery(keys: newKeys, loaded: loaded, carriesRelations: true)
    }

    /// The query, stepped: keys and hashes of every row; objects only for rows that entered or
    /// changed.
    private func readKeys(on connection: Connection) throws -> LiveDelivery? {
        let compiled = try query.compile()
        let schema = compiled.schema
        replaceFree = try mayReadChangedRows(compiled, on: connection)
        let valueCount = Int32(1 + schema.columns.count)
        let extra = compiled.orderExpressions.map { ", " + $0 }.joined()
        let sql = "\(compiled.selectKeyword) \(compiled.sql.selectList)\(extra) FROM \(schema.quotedTable)\(compiled.tail)"
        var newKeys: [RowKey] = []
        newKeys.reserveCapacity(keys.count)
        var newHashes: [RowKey: RowHashes] = [:]
        newHashes.reserveCapacity(hashes.count)
        var loaded: [RowKey: ActiveObject] = [:]
        try connection.withStatement(sql, compiled.tailArguments) { statement in
            let loader = ObjectLoader(canonicalFor: schema, context: compiled.context)
            guard let handle = statement.sqliteStatement else { return }
            while try statement.step() {
                let key = rowKey(statement, schema: schema)
                let rowHashes = RowHashes(row: Self.hash(handle, 0..<valueCount),
                                          order: Self.hash(handle, valueCount..<sqlite3_column_count(handle)))
                if hashes[key]?.row != rowHashes.row || newHashes[key] != nil {
                    loaded[key] = try loader.load(from: statement)
                }
                newKeys.append(key)
                newHashes[key] = rowHashes
            }
        }
        lock.withLock {
            counts.keys += 1
            counts.rows += newKeys.count
        }
        let first = !loadedOnce
        let orderChanged = newKeys != keys
        loadedOnce = true
        keys = newKeys
        hashes = newHashes
        guard first || orderChanged || !loaded.isEmpty else { return nil }
        return LiveDelivery(keys: first || orderChanged ? newKeys : nil, loaded: loaded, carriesRelations: false)
    }

    /// Reads the rows a commit of this database changed; nil when nothing in the result changed.
    /// - Throws: ``NeedsKeys`` when they cannot decide the new result alone (see the type's
    ///   documentation): the caller reads the keys.
    private func readChangedRows(_ changed: Set<Int64>, on connection: Connection) throws -> LiveDelivery? {
        let compiled = try query.compile()
        let schema = compiled.schema
        let valueCount = Int32(1 + schema.columns.count)
        let extra = compiled.orderExpressions.map { ", " + $0 }.joined()
        let filter = compiled.conditions.isEmpty ? "" : " AND (\(compiled.conditions))"
        let sql = "SELECT \(compiled.sql.selectList)\(extra) FROM \(schema.quotedTable) "
            + "WHERE \(compiled.sql.idExpression) IN (SELECT value FROM json_each(?))\(filter)"
        let list = "[" + changed.map(String.init).joined(separator: ",") + "]"
        var found: [RowKey: (RowHashes, ActiveObject?)] = [:]
        try connection.withStatement(sql, [.text(list)] + compiled.arguments) { statement in
            let loader = ObjectLoader(canonicalFor: schema, context: compiled.context)
            guard let handle = statement.sqliteStatement else { return }
            while try statement.step() {
                let key = rowKey(statement, schema: schema)
                let rowHashes = RowHashes(row: Self.hash(handle, 0..<valueCount),
                                          order: Self.hash(handle, valueCount..<sqlite3_column_count(handle)))
                let old = hashes[key]
                // A row entering, or moving, needs the keys read.
                guard let old, old.order == rowHashes.order else { throw NeedsKeys() }
                found[key] = (rowHashes, old.row == rowHashes.row ? nil : try loader.load(from: statement))
            }
        }
        lock.withLock {
            counts.changedRows += 1
            counts.rows += found.count
        }
        var leaving = Set<RowKey>()
        for rowID in changed where found[.rowID(rowID)] == nil {
            let key = RowKey.rowID(rowID)
            if hashes[key] != nil {
                // A row left: with a limit, another may take its place.
                guard query.limitCount == nil else { throw NeedsKeys() }
                leaving.insert(key)
            } else if query.offsetCount != nil {
                // It may have been among the rows the offset skips.
                throw NeedsKeys()
            }
        }
        var loaded: [RowKey: ActiveObject] = [:]
        for (key, (rowHashes, object)) in found {
            hashes[key] = rowHashes
            if let object { loaded[key] = object }
        }
        if !leaving.isEmpty {
            keys.removeAll { leaving.contains($0) }
            for key in leaving { hashes[key] = nil }
        }
        guard !leaving.isEmpty || !loaded.isEmpty else { return nil }
        return LiveDelivery(keys: leaving.isEmpty ? nil : keys, loaded: loaded, carriesRelations: false)
    }

    /// Thrown inside ``readChangedRows(_:)`` when the keys must be read.
    private struct NeedsKeys: Error {}

    /// Whether commits of this database may be followed by reading the changed rows alone: the
    /// model's table is a rowid table whose key is the rowid, and neither the table nor any
    /// trigger mentions REPLACE (which deletes rows without telling the update hook). (The
    /// query must also read no other table: see ``fetchAndDeliver(_:)``.)
    private func mayReadChangedRows(_ compiled: Query<Model>.Compiled, on connection: Connection) throws -> Bool {
        guard query.preloaders.isEmpty, case .rowID(let column, _) = compiled.schema.key,
              compiled.sql.hasRowID, compiled.database.isRowIDAlias(column, of: compiled.schema.tableName) else {
            return false
        }
        let others = try connection.scalarValue("""
            SELECT count(*) FROM sqlite_master WHERE (type = 'trigger' OR (type = 'table' AND name = ? COLLATE NOCASE)) \
            AND sql LIKE '%replace%'
            """, [.text(compiled.schema.tableName)])
        return others == .integer(0)
    }

    private func rowKey(_ statement: Statement, schema: ModelSchema) -> RowKey {
        switch schema.key {
        case .rowID:
            if let id = statement.int64IfInteger(at: 0) { return .rowID(id) }
        case .columns:
            let values = schema.keySlots.map { statement.value(at: Int32(1 + $0)) }
            if !values.contains(.null) { return .values(values) }
        }
        unidentifiedCount &+= 1
        return .unidentified(unidentifiedCount)
    }

    private func rowKey(of object: ActiveObject, schema: ModelSchema) throws -> RowKey {
        switch schema.key {
        case .rowID:
            if let id = object.rowID { return .rowID(id) }
        case .columns:
            let context = schema.context(in: database)
            if object.recordState == .persisted, let values = try? object.persistedKeyValues(schema: schema, context: context) {
                return .values(values)
            }
        }
        unidentifiedCount &+= 1
        return .unidentified(unidentifiedCount)
    }

    /// A hash of the current row's columns in `columns` (their types and bytes).
    private static func hash(_ statement: OpaquePointer, _ columns: Range<Int32>) -> Int {
        var hasher = Hasher()
        for index in columns {
            let type = sqlite3_column_type(statement, index)
            hasher.combine(type)
            switch type {
            case SQLITE_INTEGER:
                hasher.combine(sqlite3_column_int64(statement, index))
            case SQLITE_FLOAT:
                hasher.combine(sqlite3_column_double(statement, index).bitPattern)
            case SQLITE_TEXT, SQLITE_BLOB:
                let bytes = type == SQLITE_TEXT
                    ? UnsafeRawPointer(sqlite3_column_text(statement, index))
                    : sqlite3_column_blob(statement, index)
                let length = Int(sqlite3_column_bytes(statement, index))
                hasher.combine(length)
                if let bytes { hasher.combine(bytes: UnsafeRawBufferPointer(start: bytes, count: length)) }
            default:
                break
            }
        }
        return hasher.finalize()
    }
}
