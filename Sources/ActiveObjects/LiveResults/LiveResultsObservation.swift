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
///   reported, ``CommittedRows``): `SELECT … WHERE <filters> AND rowid IN (changed)`. SQLite
///   evaluates the filters; a row still in the result whose ORDER BY values are the same bytes
///   as before keeps its place. Anything else (a row entering, a row's order values changing, a
///   row leaving a result with a LIMIT…) needs the next way. Only for a table whose key is the
///   rowid, read alone, with filters that depend on the row alone (no `joining`, no raw SQL).
/// - **The keys** (another connection's commit, or the above could not decide): the query
///   itself, stepped without making objects; each row's key, a hash of its values and of its
///   ORDER BY values are compared with the last read; only rows that entered or whose hash
///   changed become objects. Order, filters, limit: all SQLite's.
/// - **Everything** (queries with `including`): the query with its relations, whose objects
///   the consumer's absorb in place.
final class LiveResultsObservation<Model: ActiveObject>: LiveObservation, @unchecked Sendable {
    // Safety of @unchecked Sendable: `pendingRowIDs`, `rowsUnknown` and `mailbox` are guarded
    // by `lock`; the tracker state (`keys`, `hashList`, `rowLevel`, `loadedOnce`…) is touched only
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
    private struct RowHashes: Hashable {
        var row: Int
        var order: Int

        /// The hashes of the current row of a statement of ``columns(of:)``: of the model's
        /// values, and of the ORDER BY values after them.
        init(of statement: OpaquePointer, schema: ModelSchema) {
            let valueCount = Int32(1 + schema.columns.count)
            row = RowHash.of(statement, 0..<valueCount)
            order = RowHash.of(statement, valueCount..<sqlite3_column_count(statement))
        }
    }

    /// The result columns of both reads: the model's canonical select list (the loader's
    /// layout), then the ORDER BY expressions, whose hash tells whether a row may have moved.
    private static func columns(of compiled: Query<Model>.Compiled) -> String {
        compiled.sql.selectList + compiled.orderExpressions.map { ", " + $0 }.joined()
    }
    private var keys: [RowKey] = []
    /// The hashes of the rows of `keys`, in the same order.
    private var hashList: [RowHashes] = []
    /// Where each key is in `keys`; made when first needed after `keys` changed.
    private var knownPositions: [RowKey: Int]?
    private var positions: [RowKey: Int] {
        if let knownPositions { return knownPositions }
        var made: [RowKey: Int] = [:]
        made.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() { made[key] = position }
        knownPositions = made
        return made
    }
    /// The hashes of the row with `key`, if it is in the result.
    private func hashes(of key: RowKey) -> RowHashes? {
        positions[key].map { hashList[$0] }
    }
    private var loadedOnce = false
    /// Whether the changed rows alone can be read (see the type's documentation): the query
    /// allows it (`rowLocal`, from ``mayReadChangedRows(_:)``) and its last keys read read
    /// its table alone.
    private var rowLevel = false
    private var rowLocal = false
    private var unidentifiedCount = 0
    /// The fingerprint of the last read of everything (`including`).
    private var lastFingerprint: (value: UInt64, rows: Int)?
    private var resyncRequested = false      // guarded by `lock`

    /// The model's table name, lowercased (the key of ``CommittedRows``).
    private let tableKey: String
    /// The names an UPDATE may assign the rowid by (lowercased): when one is assigned, the
    /// update hook named the row by its new rowid only, so the keys are read.
    private let rowIDColumns: Set<String>

    init(database: Database, query: Query<Model>, doorbell: AsyncThrowingStream<Void, Error>.Continuation) {
        self.query = query
        self.doorbell = doorbell
        let schema = try? ModelSchema.of(Model.self)
        tableKey = schema?.tableName.lowercased() ?? ""
        var rowIDNames: Set<String> = ["rowid", "oid", "_rowid_"]
        if case .rowID(let column, _)? = schema?.key { rowIDNames.insert(column.lowercased()) }
        rowIDColumns = rowIDNames
        super.init(database: database)
        doorbell.onTermination = { [weak self] _ in self?.cancel() }
    }

    override var wantsRowChanges: Bool { query.preloaders.isEmpty }

    override var rowTable: String { tableKey }

    override func tablesChanged(_ rows: CommittedRows?) {
        lock.withLock {
            if let rows, !rowsUnknown, rows.tables.contains(tableKey),
               rows.updatedColumns[tableKey].map({ $0.isDisjoint(with: rowIDColumns) }) ?? true {
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
            hashList = []
            knownPositions = nil
        }
        if let changedRows, changedRows.isEmpty, loadedOnce, rowLevel, !resync {
            // Nothing of the table changed (an extra wake-up): nothing to read — and no read
            // to learn tables from, so the center keeps routing by the last read's.
            return nil
        }
        let readsEverything = !query.preloaders.isEmpty
        let ((found, keysRead), read, fingerprint): ((LiveDelivery?, Bool), Set<String>, (value: UInt64, rows: Int))
        do {
            ((found, keysRead), read, fingerprint) = try observedRead(changedRows: changedRows, readsEverything: readsEverything)
        } catch {
            // The rows taken are not read: the fetch tried again (after `busy`) reads the keys.
            lock.withLock { rowsUnknown = true }
            throw error
        }
        if keysRead {
            // The changed rows alone decide only for a query that reads its table alone.
            let table = tableKey
            rowLevel = rowLocal && read.allSatisfy { name in
                let name = name.lowercased()
                return name == table || name.hasPrefix("sqlite_") || name == "json_each"
            }
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

    /// The read itself, in one snapshot on a reader (see the type for the three ways): what to
    /// deliver, and whether it was a read of the keys.
    private func observedRead(changedRows: Set<Int64>?, readsEverything: Bool)
        throws -> ((LiveDelivery?, keysRead: Bool), Set<String>, (value: UInt64, rows: Int)) {
        try database.observedRead(fingerprinting: readsEverything) { connection -> (LiveDelivery?, keysRead: Bool) in
            if readsEverything { return (try readEverything(), false) }
            if let changedRows, loadedOnce, rowLevel {
                do {
                    return (try readChangedRows(changedRows, on: connection), false)
                } catch is NeedsKeys {
                    // Read the keys below.
                }
            }
            return (try readKeys(on: connection), true)
        }
    }

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
            let key = rowKey(of: object, schema: schema)
            newKeys.append(key)
            loaded[key] = object
        }
        loadedOnce = true
        keys = newKeys
        knownPositions = nil
        return LiveDelivery(keys: newKeys, loaded: loaded, carriesRelations: true)
    }

    /// The query, stepped: keys and hashes of every row; objects only for rows that entered or
    /// changed. While the rows come in the order and with the keys of the last read, only their
    /// hashes are compared (and a changed one updated in place); from the first row out of
    /// place, the keys and hashes are gathered anew.
    private func readKeys(on connection: Connection) throws -> LiveDelivery? {
        let compiled = try query.compile()
        let schema = compiled.schema
        rowLocal = mayReadChangedRows(compiled)
        let sql = "\(compiled.selectKeyword) \(Self.columns(of: compiled)) FROM \(compiled.source)\(compiled.tail)"
        var position = 0                       // in `keys`, while the rows stay in place
        var inPlace: [(position: Int, hashes: RowHashes)] = []   // applied once the read succeeded
        var rebuilt: (keys: [RowKey], hashes: [RowHashes])?
        var loaded: [RowKey: ActiveObject] = [:]
        var stepped = 0
        try connection.withStatement(sql, compiled.tailArguments) { statement in
            let loader = ObjectLoader(canonicalFor: schema, context: compiled.context)
            guard let handle = statement.sqliteStatement else { return }
            while try statement.step() {
                stepped += 1
                let key = rowKey(statement, schema: schema)
                let rowHashes = RowHashes(of: handle, schema: schema)
                if rebuilt == nil, position < keys.count, keys[position] == key {
                    if hashList[position] != rowHashes {
                        loaded[key] = try loader.load(from: statement)
                        inPlace.append((position, rowHashes))
                    }
                    position += 1
                    continue
                }
                if rebuilt == nil {
                    var prefix = Array(hashList[..<position])
                    for (index, hashes) in inPlace { prefix[index] = hashes }
                    rebuilt = (Array(keys[..<position]), prefix)
                }
                if hashes(of: key) != rowHashes || loaded[key] != nil {
                    loaded[key] = try loader.load(from: statement)
                }
                rebuilt!.keys.append(key)
                rebuilt!.hashes.append(rowHashes)
            }
        }
        lock.withLock {
            counts.keys += 1
            counts.rows += stepped
        }
        for (index, hashes) in inPlace { hashList[index] = hashes }
        if rebuilt == nil && position < keys.count {
            // The last rows left.
            rebuilt = (Array(keys[..<position]), Array(hashList[..<position]))
        }
        let first = !loadedOnce
        loadedOnce = true
        if let rebuilt {
            keys = rebuilt.keys
            hashList = rebuilt.hashes
            knownPositions = nil
        }
        guard first || rebuilt != nil || !loaded.isEmpty else { return nil }
        return LiveDelivery(keys: first || rebuilt != nil ? keys : nil, loaded: loaded, carriesRelations: false)
    }

    /// Reads the rows a commit of this database changed; nil when nothing in the result changed.
    /// - Throws: ``NeedsKeys`` when they cannot decide the new result alone (see the type's
    ///   documentation): the caller reads the keys.
    private func readChangedRows(_ changed: Set<Int64>, on connection: Connection) throws -> LiveDelivery? {
        let compiled = try query.compile()
        let schema = compiled.schema
        // The filters first: numbered parameters (`?1`) in a raw fragment keep their numbers.
        // They include the soft-delete scope's condition (`Compiled.conditions`): a row
        // soft-deleted by an UPDATE is not found and leaves; a row restored enters (the keys
        // are read, as for any row entering).
        let filter = compiled.conditions.isEmpty ? "" : "(\(compiled.conditions)) AND "
        let sql = "SELECT \(Self.columns(of: compiled)) FROM \(compiled.source) "
            + "WHERE \(filter)\(compiled.sql.idExpression) IN (SELECT value FROM json_each(?))"
        let list = "[" + changed.map(String.init).joined(separator: ",") + "]"
        var found: [RowKey: (RowHashes, ActiveObject?)] = [:]
        try connection.withStatement(sql, compiled.arguments + [.text(list)]) { statement in
            let loader = ObjectLoader(canonicalFor: schema, context: compiled.context)
            guard let handle = statement.sqliteStatement else { return }
            while try statement.step() {
                let key = rowKey(statement, schema: schema)
                let rowHashes = RowHashes(of: handle, schema: schema)
                let old = hashes(of: key)
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
            if positions[key] != nil {
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
            guard let position = positions[key], hashList[position] != rowHashes else { continue }
            hashList[position] = rowHashes
            if let object { loaded[key] = object }
        }
        if !leaving.isEmpty {
            var keptKeys: [RowKey] = [], keptHashes: [RowHashes] = []
            keptKeys.reserveCapacity(keys.count)
            keptHashes.reserveCapacity(keys.count)
            for (key, rowHashes) in zip(keys, hashList) where !leaving.contains(key) {
                keptKeys.append(key)
                keptHashes.append(rowHashes)
            }
            keys = keptKeys
            hashList = keptHashes
            knownPositions = nil
        }
        guard !leaving.isEmpty || !loaded.isEmpty else { return nil }
        return LiveDelivery(keys: leaving.isEmpty ? nil : keys, loaded: loaded, carriesRelations: false)
    }

    /// Thrown inside ``readChangedRows(_:)`` when the keys must be read.
    private struct NeedsKeys: Error {}

    /// Whether commits of this database may be followed by reading the changed rows alone: the
    /// model's table is a rowid table whose key is the rowid, and every filter depends on the
    /// row alone (no subquery, no `joining`: those depend on other rows, which may change while
    /// this one does not), and it is no search. (The query must also read no other table: see
    /// ``fetchAndDeliver(_:)``. Commits whose rows the update hook may not have reported —
    /// REPLACE, the truncate optimization — come without rows: `Connection+RowChanges.swift`.)
    private func mayReadChangedRows(_ compiled: Query<Model>.Compiled) -> Bool {
        // A search's ranks move with every write to the table (bm25 counts the whole index):
        // its order is read with the keys.
        guard query.preloaders.isEmpty, !compiled.searches, case .rowID(let column, _) = compiled.schema.key,
              compiled.sql.hasRowID, compiled.database.isRowIDAlias(column, of: compiled.schema.tableName) else {
            return false
        }
        return query.filters.allSatisfy(\.isRowLocal)
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

    private func rowKey(of object: ActiveObject, schema: ModelSchema) -> RowKey {
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
}
