import Foundation

/// One user's data in a hub's database, read and written on the writer inside a transaction
/// the caller holds:
///
/// - `activeobjects_hub_rows`: one row per synchronized row — a number (`id`, which the fields
///   name), the user, table and key, `seq`, the user's position of its
///   last change (what pulls follow), `origin`, the device that made that change, and
///   `other_seq`, after which the origin has not seen every change (see `recordChange`);
/// - `activeobjects_hub_fields`: one row per field, by row number — its value and the stamp of
///   the edit that wrote it (`+` and `-` are the row's insert and delete stamps);
/// - `activeobjects_hub_devices`: which user each device belongs to.
struct HubStore {
    let connection: Connection
    let user: String
    /// The hub's identity, sent with each reply.
    let hub: String
    /// The columns the hub's models declare, by table: only these are sent to devices (a
    /// column a model dropped stays stored, for older devices' pushes, but is not sent).
    let columns: [String: Set<String>]

    /// Merges the pushed rows and reads the rows to pull.
    func exchange(_ request: SyncRequest, limit: Int) throws -> SyncReply {
        try register(device: request.device)
        var seq = try lastSequence()
        // A cursor beyond the last position: this hub was restored from a backup. The device
        // pulls from the start (and pushes everything again).
        let reset = request.since > seq
        let since = reset ? 0 : request.since
        // New positions go beyond the cursor: other devices may hold one as far.
        if reset { seq = request.since }
        for row in request.push where !row.fields.isEmpty {
            if let id = try rowID(table: row.table, key: row.key) {
                if try merge(row, into: id) {
                    seq += 1
                    try recordChange(id: id, device: request.device, seq: seq, since: since)
                }
            } else {
                seq += 1
                let id = try insertRow(table: row.table, key: row.key, device: request.device, seq: seq)
                _ = try merge(row, into: id)
            }
        }
        try connection.execute(
            "INSERT INTO \(SyncHub.usersTable) (user, seq) VALUES (?, ?) ON CONFLICT (user) DO UPDATE SET seq = excluded.seq",
            [.text(user), .integer(seq)])
        let (rows, cursor, more) = try changes(since: since, for: request.device, limit: limit)
        return SyncReply(version: SyncProtocol.version, accepted: request.push.count, rows: rows, cursor: cursor, more: more,
                         hub: hub, reset: reset ? true : nil)
    }

    private func rowID(table: String, key: DatabaseValue) throws -> Int64? {
        if case .integer(let id)? = try connection.scalarValue(
            "SELECT id FROM \(SyncHub.rowsTable) WHERE user = ? AND tbl = ? AND pk = ?", [.text(user), .text(table), key]) {
            return id
        }
        return nil
    }

    private func insertRow(table: String, key: DatabaseValue, device: Int64, seq: Int64) throws -> Int64 {
        let id = try connection.scalarValue(
            "INSERT INTO \(SyncHub.rowsTable) (user, tbl, pk, seq, origin, other_seq) VALUES (?, ?, ?, ?, ?, 0) RETURNING id",
            [.text(user), .text(table), key, .integer(seq), .integer(device)])
        guard case .integer(let id)? = id else {
            throw ActiveObjectError.syncRefused(reason: "the hub could not store the row \(key) of \(table)")
        }
        return id
    }

    /// Refuses a device that belongs to another user; remembers a new one.
    private func register(device: Int64) throws {
        let owner = try connection.scalarValue("SELECT user FROM \(SyncHub.devicesTable) WHERE device = ?", [.integer(device)])
        switch owner {
        case .text(let owner)? where owner == user: return
        case .some: throw ActiveObjectError.syncRefused(reason: "the device \(device) belongs to another user")
        case nil:
            try connection.execute("INSERT INTO \(SyncHub.devicesTable) (device, user) VALUES (?, ?)", [.integer(device), .text(user)])
        }
    }

    private func lastSequence() throws -> Int64 {
        let seq = try connection.scalarValue(
            """
            SELECT max(coalesce((SELECT seq FROM \(SyncHub.usersTable) WHERE user = ?1), 0),
                       coalesce((SELECT max(seq) FROM \(SyncHub.rowsTable) WHERE user = ?1), 0))
            """, [.text(user)])
        if case .integer(let seq)? = seq { return seq }
        return 0
    }

    /// Keeps, field by field, the later stamp. Returns whether anything changed.
    private func merge(_ row: SyncRow, into id: Int64) throws -> Bool {
        var changed = false
        for (column, field) in row.fields {
            try connection.execute(
                """
                INSERT INTO \(SyncHub.fieldsTable) (row, col, value, hlc, node) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (row, col) DO UPDATE SET value = excluded.value, hlc = excluded.hlc, node = excluded.node
                WHERE excluded.hlc > hlc OR (excluded.hlc = hlc AND excluded.node > node)
                """,
                [.integer(id), .text(column), field.value, .integer(field.stamp.time), .integer(field.stamp.node)])
            if connection.lastChanges > 0 { changed = true }
        }
        return changed
    }

    /// Moves a changed row to position `seq`, changed by `device`, whose request pulls from `since`.
    ///
    /// A pull skips the rows whose changes after the device's cursor are all its own. So each
    /// row keeps `other_seq`: a position after which its `origin` has not seen every change
    /// made by others. When `device` changes a row it has not seen all of — the row moved past
    /// `since` by another device (and this request's own push moved it before the pull could
    /// reach it), or it already owed the device a change — `other_seq` becomes the new
    /// position, so the device receives the row; otherwise it keeps the last change by others,
    /// which the device has.
    private func recordChange(id: Int64, device: Int64, seq: Int64, since: Int64) throws {
        try connection.execute(
            """
            UPDATE \(SyncHub.rowsTable) SET
                other_seq = CASE
                    WHEN origin <> ?1 THEN (CASE WHEN seq > ?2 THEN ?3 ELSE seq END)
                    ELSE (CASE WHEN other_seq > ?2 THEN ?3 ELSE other_seq END) END,
                origin = ?1, seq = ?3
            WHERE id = ?4
            """,
            [.integer(device), .integer(since), .integer(seq), .integer(id)])
    }

    /// The rows changed after `since` other than only by `device`, in order of change, at most
    /// `limit`; the cursor to resume from; whether more rows wait.
    private func changes(since: Int64, for device: Int64, limit: Int) throws -> ([SyncRow], Int64, Bool) {
        var cursor = since
        var found: [(id: Int64, table: String, key: DatabaseValue)] = []
        var scanned = 0
        let scanLimit = limit.multipliedReportingOverflow(by: 20).overflow ? Int.max : limit * 20
        try connection.withStatement(
            "SELECT tbl, pk, seq, origin, other_seq, id FROM \(SyncHub.rowsTable) WHERE user = ? AND seq > ? ORDER BY seq",
            [.text(user), .integer(since)]
        ) { statement in
            while try statement.step() {
                guard case .text(let table) = statement.value(at: 0), case .integer(let seq) = statement.value(at: 2),
                      case .integer(let origin) = statement.value(at: 3), case .integer(let otherSeq) = statement.value(at: 4),
                      case .integer(let id) = statement.value(at: 5)
                else { continue }
                cursor = seq
                scanned += 1
                // Rows only this device changed since its cursor: it has them already.
                if origin != device || otherSeq > since { found.append((id, table, statement.value(at: 1))) }
                if found.count == limit || scanned == scanLimit { break }
            }
        }
        let more = try connection.scalarValue(
            "SELECT 1 FROM \(SyncHub.rowsTable) WHERE user = ? AND seq > ? LIMIT 1", [.text(user), .integer(cursor)]) != nil
        var rows: [SyncRow] = []
        rows.reserveCapacity(found.count)
        for (id, table, key) in found {
            rows.append(SyncRow(table: table, key: key, fields: try fields(of: id, table: table)))
        }
        return (rows, cursor, more)
    }

    private func fields(of id: Int64, table: String) throws -> [String: SyncField] {
        let declared = columns[table] ?? []
        var fields: [String: SyncField] = [:]
        try connection.withStatement(
            "SELECT col, value, hlc, node FROM \(SyncHub.fieldsTable) WHERE row = ?", [.integer(id)]
        ) { statement in
            while try statement.step() {
                guard case .text(let column) = statement.value(at: 0), case .integer(let time) = statement.value(at: 2),
                      case .integer(let node) = statement.value(at: 3),
                      SyncProtocol.isRowStateField(column) || declared.contains(column) else { continue }
                fields[column] = SyncField(value: statement.value(at: 1), stamp: SyncStamp(time: time, node: node))
            }
        }
        return fields
    }

    /// The rows of `table` that exist, as column → value (the key under `keyColumn`), by key.
    func rows(table: String, keyColumn: String) throws -> [[String: DatabaseValue]] {
        var keys: [(id: Int64, key: DatabaseValue)] = []
        try connection.withStatement(
            "SELECT id, pk FROM \(SyncHub.rowsTable) WHERE user = ? AND tbl = ? ORDER BY pk", [.text(user), .text(table)]
        ) { statement in
            while try statement.step() {
                if case .integer(let id) = statement.value(at: 0) { keys.append((id, statement.value(at: 1))) }
            }
        }
        var result: [[String: DatabaseValue]] = []
        for (id, key) in keys {
            let fields = try fields(of: id, table: table)
            guard SyncRow.isAlive(inserted: fields[SyncProtocol.insertedField]?.stamp,
                                  deleted: fields[SyncProtocol.deletedField]?.stamp) else { continue }
            var row: [String: DatabaseValue] = [keyColumn: key]
            for (column, field) in fields where !SyncProtocol.isRowStateField(column) { row[column] = field.value }
            result.append(row)
        }
        return result
    }
}
