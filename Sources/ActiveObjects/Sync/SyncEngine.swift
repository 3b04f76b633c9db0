import Foundation

/// What one ``SyncEngine/synchronize()`` did.
public struct SyncReport: Sendable, Hashable, CustomStringConvertible {
    /// The number of changed rows pushed to the hub and stored there.
    public let pushed: Int
    /// The number of rows inserted, updated or deleted on this device from the hub's changes.
    public let pulled: Int

    /// A report of `pushed` and `pulled` rows.
    public init(pushed: Int, pulled: Int) {
        self.pushed = pushed
        self.pulled = pulled
    }

    /// `pushed 3, pulled 5`.
    public var description: String { "pushed \(pushed), pulled \(pulled)" }
}

/// How a device exchanges synchronization messages with a hub: one request, one reply.
///
/// ``HTTPSyncTransport`` posts them to a server. Tests and other protocols implement it
/// themselves — an in-process transport can call ``SyncHub/handle(request:user:)`` directly:
///
/// ```swift
/// struct Direct: SyncTransport {
///     let hub: SyncHub
///     func exchange(_ request: Data) async throws -> Data {
///         try await hub.handle(request: request, user: "alice")
///     }
/// }
/// ```
///
/// A transport that fails or is interrupted simply throws: the engine keeps every change
/// queued and resumes where it stopped at the next ``SyncEngine/synchronize()``.
public protocol SyncTransport: Sendable {
    /// Sends one request to the hub and returns its reply.
    /// - Throws: whatever stops the exchange (no network, a refused request): the engine's
    ///   ``SyncEngine/synchronize()`` throws it, with the changes still queued.
    func exchange(_ request: Data) async throws -> Data
}

/// The device side of synchronization: pushes the changes recorded in this database to a hub
/// and applies the changes the hub holds for the user (§18).
///
/// ```swift
/// let engine = try SyncEngine(database: db, models: [Note.self, Folder.self],
///                             transport: HTTPSyncTransport(url: serverURL, token: userToken))
/// let report = try await engine.synchronize()
/// print(report.pushed, report.pulled)
/// let waiting = try engine.pendingChangeCount()
/// ```
///
/// Changes are recorded by triggers whoever writes, in the same transaction as the change, and
/// stay queued until the hub has stored them; a pulled row is a commit like any other (live
/// queries see it). The engine does nothing between calls: call ``synchronize()`` when the app
/// starts, after local edits, on a timer or on a push notification — as often as you like.
/// See <doc:Sync>.
public final class SyncEngine: Sendable {
    /// The device's database.
    public let database: Database
    /// The transport to the hub.
    public let transport: any SyncTransport
    /// The most rows one request pushes (the hub's limit on request size also applies).
    public let batchSize: Int

    /// The synchronized models, by table.
    private let models: [String: SyncModel]
    private let tableNames: [String]
    /// The synchronize() in progress, which the next one waits for.
    private let running = LockedValue<Task<SyncReport, any Error>?>(nil)

    /// The size a request's rows are kept under, in bytes; a larger row goes alone.
    static let requestBudget = 4 << 20
    /// The largest row the engine pushes, in bytes (below the hub's default request limit).
    static let largestRow = (8 << 20) - (64 << 10)

    /// Creates an engine for `models` in `database`, exchanging through `transport`. Installs
    /// change capture on each model's table that exists (tables created later get it from
    /// ``ActiveRecord/createTable()``); rows a table already holds are queued
    /// as inserted the first time.
    ///
    /// - Parameters:
    ///   - database: the device's database.
    ///   - models: the synchronized models to push and pull (each ``ActiveObject/isSynchronized``).
    ///   - transport: how requests reach the hub, e.g. ``HTTPSyncTransport``.
    ///   - batchSize: the most rows a request pushes or a reply brings (default 500).
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` for a model that is not
    ///   ``ActiveObject/isSynchronized`` or has no UUID or String key;
    ///   ``ActiveObjectError/invalidArgument(_:)`` for an empty model list or a batch size below 1;
    ///   ``DatabaseError`` from installing the triggers.
    public init(database: Database, models: [ActiveObject.Type], transport: any SyncTransport, batchSize: Int = 500) throws {
        guard !models.isEmpty else { throw ActiveObjectError.invalidArgument("SyncEngine needs at least one model") }
        guard batchSize >= 1 else { throw ActiveObjectError.invalidArgument("batchSize must be at least 1, not \(batchSize)") }
        self.database = database
        self.transport = transport
        self.batchSize = batchSize
        var accepted: [String: SyncModel] = [:]
        var schemas: [ModelSchema] = []
        for model in models {
            let checked = try SyncModel(model, in: database)
            accepted[checked.table] = checked
            schemas.append(try ModelSchema.of(model))
        }
        self.models = accepted
        tableNames = schemas.map(\.tableName)
        try database.transaction {
            try database.withAccess(.write) { access in
                for statement in SyncCapture.bookkeepingSQL { try access.connection.execute(statement) }
                _ = try SyncLedger(connection: access.connection).node()
                for schema in schemas { try SyncCapture.install(schema, on: access.connection) }
            }
        }
    }

    /// The number of rows with changes not yet stored by the hub (inserted, updated or deleted
    /// rows, each counted once however often it changed).
    /// - Throws: ``DatabaseError``, ``ActiveObjectError/databaseClosed``.
    public func pendingChangeCount() throws -> Int {
        try database.read {
            try database.withAccess(.read) { access in
                try SyncLedger(connection: access.connection).pendingRowCount(tables: tableNames)
            }
        }
    }

    /// Pushes every change queued when it is called and pulls everything the hub holds for the
    /// user, in as many exchanges as it takes; then applies the pulled rows in one transaction.
    ///
    /// Calls on one engine run one after the other. A call that throws loses nothing: changes
    /// the hub did not acknowledge stay queued, and rows already received are kept and applied
    /// by the next call, which resumes pulling where this one stopped.
    ///
    /// - Returns: the number of rows pushed and pulled.
    /// - Throws: what the transport throws; ``ActiveObjectError/syncRefused(reason:)`` when the
    ///   hub refused a request (its reason) or sent a reply the engine cannot read;
    ///   ``DatabaseError`` when a pulled row cannot be written (a `UNIQUE` constraint another
    ///   device's row breaks: nothing of the pull is applied until it is resolved);
    ///   `CancellationError` when the task is cancelled (between exchanges).
    public func synchronize() async throws -> SyncReport {
        let task: Task<SyncReport, any Error> = running.withLock { running in
            let previous = running
            let task = Task { [self] in
                _ = await previous?.result
                return try await run()
            }
            running = task
            return task
        }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    // MARK: One synchronization

    private func run() async throws -> SyncReport {
        var through = try await perform { ledger in
            try ledger.fold()
            return try ledger.lastSequence()
        }
        var pushed = 0
        var pulling = true
        // The replies stored in the inbox by this call, by batch: applied without decoding again.
        var received: [Int64: SyncReply] = [:]
        // Rows the hub would refuse (or too large to send): left queued, reported at the end.
        var setAside: [SyncRowKey: String] = [:]
        // Whether this call already started over with a new hub (once: a hub whose identity
        // changes at every reply must not keep it busy forever).
        var restarted = false
        while true {
            try Task.checkCancellation()
            let outgoing = try await perform { [setAside, through] ledger in
                try self.outgoingBatch(ledger, through: through, skipping: Set(setAside.keys))
            }
            setAside.merge(outgoing.setAside) { first, _ in first }
            if outgoing.rows.isEmpty && !pulling && outgoing.setAside.isEmpty { break }
            if outgoing.rows.isEmpty && !outgoing.setAside.isEmpty && !pulling { continue }
            let request = SyncRequest(version: SyncProtocol.version, device: outgoing.node, user: nil,
                                      push: outgoing.rows, since: outgoing.cursor, limit: batchSize)
            let replyData = try await transport.exchange(SyncJSONWriter.encode(request))
            let reply = try decodeReply(replyData, pushed: outgoing.rows.count)
            let stored = try await perform { ledger -> (batch: Int64?, restarted: Bool) in
                try ledger.removeEntries(outgoing.entries)
                var batch: Int64?
                if !reply.rows.isEmpty {
                    let stored = try ledger.connection.scalarValue(
                        "INSERT INTO \(SyncCapture.inboxTable) (reply) VALUES (?) RETURNING batch", [.blob(replyData)])
                    if case .integer(let number)? = stored { batch = number }
                }
                let restarted = try ledger.setCursor(reply.cursor, hub: reply.hub, reset: reply.reset == true)
                return (batch, restarted)
            }
            if let batch = stored.batch { received[batch] = reply }
            pushed += outgoing.rows.count
            pulling = reply.more
            if stored.restarted && !restarted {
                // Another hub, or this one restored from a backup: pull everything, push everything.
                restarted = true
                pulling = true
                through = try await perform { [tableNames] ledger in
                    try ledger.queueEverything(tables: tableNames)
                    return try ledger.lastSequence()
                }
            }
        }
        let pulled = try await perform { [received] ledger in try self.applyInbox(ledger, received: received) }
        if !setAside.isEmpty {
            let reasons = setAside.values.sorted().prefix(3).joined(separator: "; ")
            throw ActiveObjectError.syncRefused(
                reason: "\(setAside.count) changed row(s) cannot be pushed and stay queued until they are fixed (\(reasons)); everything else was pushed (\(pushed) rows) and pulled (\(pulled) rows)")
        }
        return SyncReport(pushed: pushed, pulled: pulled)
    }

    /// Runs `body` in a write transaction on the database's writer queue.
    private func perform<T: Sendable>(_ body: @escaping @Sendable (SyncLedger) throws -> T) async throws -> T {
        let database = database
        return try await database.perform(.writing) {
            try database.transaction {
                try database.withAccess(.write) { access in try body(SyncLedger(connection: access.connection)) }
            }
        }
    }

    private struct Outgoing: Sendable {
        var rows: [SyncRow]
        var entries: [SyncLedger.Entry]
        var setAside: [SyncRowKey: String]
        var node: Int64
        var cursor: Int64
    }

    /// The next batch of queued rows (up to `through`, leaving out `skipping`): at most
    /// ``batchSize`` rows, within the request budget (a larger row goes alone). A row the hub
    /// would refuse is set aside with the reason.
    private func outgoingBatch(_ ledger: SyncLedger, through: Int64, skipping: Set<SyncRowKey>) throws -> Outgoing {
        try ledger.fold()
        let pending = try ledger.pendingRows(limit: batchSize, through: through, tables: tableNames, skipping: skipping)
        var rows: [SyncRow] = []
        var setAside: [SyncRowKey: String] = [:]
        var size = 0
        for key in pending {
            guard let model = models[key.table] else { continue }
            let row = try ledger.outgoingRow(table: key.table, key: key.key, keyColumn: model.keyColumn,
                                             columns: Set(model.columns.keys))
            if let problem = model.problem(with: row, knownColumnsOnly: true) {
                setAside[key] = problem
                continue
            }
            if row.fields.values.contains(where: { $0.stamp.time > SyncStamp.latestAcceptable() }) {
                setAside[key] = "the row \(key.key) of \(key.table) was stamped more than a day ahead of this device's clock (it ran ahead): the hub refuses it until then"
                continue
            }
            let rowSize = SyncJSONWriter.size(of: row)
            if rowSize > Self.largestRow {
                setAside[key] = "the row \(key.key) of \(key.table) takes \(rowSize) bytes, more than one request may carry (\(Self.largestRow))"
                continue
            }
            if !rows.isEmpty && size + rowSize > Self.requestBudget { break }
            size += rowSize
            rows.append(row)
        }
        let sent = Set(rows.map { SyncRowKey(table: $0.table, key: $0.key) })
        let entries = sent.isEmpty ? [] : try ledger.entries(of: sent, through: through, tables: tableNames)
        return Outgoing(rows: rows, entries: entries, setAside: setAside, node: try ledger.node(), cursor: try ledger.cursor())
    }

    private func decodeReply(_ data: Data, pushed: Int) throws -> SyncReply {
        let reply: SyncReply
        do {
            reply = try JSONDecoder().decode(SyncReply.self, from: data)
        } catch let error as DecodingError {
            throw ActiveObjectError.syncRefused(reason: "the hub's reply cannot be read: \(error.syncDescription)")
        } catch {
            throw ActiveObjectError.syncRefused(reason: "the hub's reply cannot be read: \(error)")
        }
        guard reply.version == SyncProtocol.version else {
            throw ActiveObjectError.syncRefused(
                reason: "the hub replied with protocol version \(reply.version); this device speaks \(SyncProtocol.version)")
        }
        guard reply.accepted == pushed else {
            throw ActiveObjectError.syncRefused(reason: "the hub stored \(reply.accepted) of the \(pushed) rows pushed")
        }
        return reply
    }

    /// Applies every pulled reply waiting in the inbox, in one transaction with foreign-key
    /// checks deferred to its end, then empties the inbox. Returns the number of rows changed.
    /// `received`: replies already decoded, by batch (the others, left by a call that failed,
    /// are read from the inbox).
    private func applyInbox(_ ledger: SyncLedger, received: [Int64: SyncReply]) throws -> Int {
        let connection = ledger.connection
        var batches: [Int64] = []
        try connection.withStatement("SELECT batch FROM \(SyncCapture.inboxTable) ORDER BY batch", []) { statement in
            while try statement.step() {
                if case .integer(let batch) = statement.value(at: 0) { batches.append(batch) }
            }
        }
        // Rows waiting in the fields table for a parent, or pulled by an engine without their model.
        let waiting = try connection.scalarValue(
            "SELECT EXISTS (SELECT 1 FROM \(SyncCapture.fieldsTable) WHERE parked = 1 AND tbl IN (SELECT value FROM json_each(?)))",
            [.text(jsonArray(tableNames))]) == .integer(1)
        guard !batches.isEmpty || waiting else { return 0 }
        try connection.execute("PRAGMA defer_foreign_keys = ON")
        let enforced = try connection.scalarValue("PRAGMA foreign_keys") == .integer(1)
        let childTables = enforced ? try ledger.tablesWithForeignKeys() : []
        // Foreign keys that already failed (a legacy file) are not this pull's to repair.
        let failingBefore = try ledger.violations(in: childTables)
        try ledger.fold()
        var columnsByTable: [String: Set<String>] = [:]
        var latest: Int64 = 0
        var changed = Set<SyncRowKey>()
        // Rows written again from the values they waited with.
        var retried = Set<SyncRowKey>()
        if waiting {
            for (table, model) in models.sorted(by: { $0.key < $1.key }) {
                let columns = try SyncCapture.tableColumns(table, on: connection)
                if !columns.isEmpty { retried.formUnion(try ledger.applyParked(table: table, keyColumn: model.keyColumn, columns: columns)) }
            }
            changed = retried
        }
        for batch in batches {
            let reply: SyncReply
            if let known = received[batch] {
                reply = known
            } else {
                guard case .blob(let data)? = try connection.scalarValue(
                    "SELECT reply FROM \(SyncCapture.inboxTable) WHERE batch = ?", [.integer(batch)]) else { continue }
                reply = try JSONDecoder().decode(SyncReply.self, from: data)
            }
            for row in reply.rows {
                if columnsByTable[row.table] == nil {
                    columnsByTable[row.table] = Set(try SyncCapture.tableColumns(row.table, on: connection))
                }
                for field in row.fields.values { latest = max(latest, field.stamp.time) }
                // Rows of a table this engine does not synchronize (yet) are kept, parked.
                let keyColumn = models[row.table]?.keyColumn
                let columns = keyColumn == nil ? [] : columnsByTable[row.table] ?? []
                if try ledger.apply(row, keyColumn: keyColumn, columns: columns) {
                    changed.insert(SyncRowKey(table: row.table, key: row.key))
                }
            }
        }
        if latest > 0 { try ledger.observe(latest) }
        if !childTables.isEmpty {
            let parked = try ledger.repairForeignKeys(in: childTables, before: failingBefore, keyColumns: models.mapValues(\.keyColumn))
            // A row that went back to waiting for its parent did not change (as far as anyone sees).
            for row in parked where changed.contains(row) {
                guard let model = models[row.table] else { continue }
                let present = try connection.scalarValue(
                    "SELECT 1 FROM \(SQLIdentifier.quote(row.table)) WHERE \(SQLIdentifier.quote(model.keyColumn)) = ?", [row.key])
                if present == nil || retried.contains(row) { changed.remove(row) }
            }
        }
        try connection.execute("DELETE FROM \(SyncCapture.inboxTable)")
        return changed.count
    }
}
