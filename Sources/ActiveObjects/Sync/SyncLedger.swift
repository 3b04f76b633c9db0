import Foundation

/// A device's synchronization state in its database file, read and written on the writer inside
/// a transaction the caller holds:
///
/// - `activeobjects_sync_log`: changes not yet stored by the hub, appended by the triggers
///   (``SyncCapture``), and clock entries written after pulled rows were applied;
/// - `activeobjects_sync_fields`: the stamp of every field of every synchronized row — and the
///   value of a pulled field whose column the table does not have yet (parked);
/// - `activeobjects_sync_state`: the device's node, its clock, and the pull cursor;
/// - `activeobjects_sync_inbox`: pulled replies waiting to be applied together.
struct SyncLedger {
    let connection: Connection

    // MARK: State

    private func state(_ name: String) throws -> DatabaseValue? {
        try connection.scalarValue("SELECT value FROM \(SyncCapture.stateTable) WHERE name = ?", [.text(name)])
    }

    private func setState(_ name: String, _ value: DatabaseValue) throws {
        try connection.execute(
            "INSERT INTO \(SyncCapture.stateTable) (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            [.text(name), value])
    }

    private func integerState(_ name: String) throws -> Int64 {
        if case .integer(let value)? = try state(name) { return value }
        return 0
    }

    /// This device's node: a random number chosen once per file, breaking ties between stamps.
    func node() throws -> Int64 {
        if case .integer(let node)? = try state("node") { return node }
        var node: Int64 = 0
        while node == 0 { node = Int64.random(in: 1...Int64.max) }
        try setState("node", .integer(node))
        return node
    }

    /// The pull cursor: the hub's position of the last row received.
    func cursor() throws -> Int64 { try integerState("cursor") }

    /// Moves the pull cursor to a reply's. When the reply comes from another hub than the
    /// previous one (a hub restored from a backup, or replaced), whose positions mean nothing
    /// here, the cursor goes back to the start instead, and everything is pulled again
    /// (applying a row twice changes nothing). Returns whether it went back.
    /// A hub that says it does not know the cursor (`reset`: restored from a backup, its
    /// positions behind the device's) answered from the start already: its cursor is kept.
    func setCursor(_ cursor: Int64, hub: String?, reset: Bool) throws -> Bool {
        var otherHub = false
        if let hub {
            if case .text(let known)? = try state("hub"), known != hub { otherHub = true }
            try setState("hub", .text(hub))
        }
        try setState("cursor", .integer(otherHub ? 0 : cursor))
        return otherHub || reset
    }

    /// Queues every row of `tables` this device has stamps for, to be pushed again as it is (a
    /// new hub, or one restored from a backup, may lack them; merging makes the repeats
    /// harmless). The entries carry no change: folding skips them.
    func queueEverything(tables: [String]) throws {
        try connection.execute(
            """
            INSERT INTO \(SyncCapture.logTable) (tbl, pk, kind, stamp)
            SELECT DISTINCT tbl, pk, \(SyncCapture.Kind.resend.rawValue), 0 FROM \(SyncCapture.fieldsTable)
            WHERE tbl IN (SELECT value FROM json_each(?))
            """, [.text(jsonArray(tables))])
    }

    /// The last sequence number of the log (0 when empty).
    func lastSequence() throws -> Int64 {
        if case .integer(let seq)? = try connection.scalarValue("SELECT max(seq) FROM \(SyncCapture.logTable)") { return seq }
        return 0
    }

    // MARK: Fields

    /// The stamps (and parked values) of one row's fields.
    func fields(table: String, key: DatabaseValue) throws -> [String: (stamp: SyncStamp, parked: Bool, value: DatabaseValue)] {
        var result: [String: (stamp: SyncStamp, parked: Bool, value: DatabaseValue)] = [:]
        try connection.withStatement(
            "SELECT col, hlc, node, parked, value FROM \(SyncCapture.fieldsTable) WHERE tbl = ? AND pk = ?",
            [.text(table), key]
        ) { statement in
            while try statement.step() {
                guard case .text(let column) = statement.value(at: 0),
                      case .integer(let time) = statement.value(at: 1),
                      case .integer(let node) = statement.value(at: 2) else { continue }
                result[column] = (SyncStamp(time: time, node: node), statement.value(at: 3) == .integer(1), statement.value(at: 4))
            }
        }
        return result
    }

    /// Records a field's stamp, when it is later than the one recorded; with `parked`, also its
    /// value (a column the table does not have yet).
    func setField(table: String, key: DatabaseValue, column: String, stamp: SyncStamp,
                  parked: Bool = false, value: DatabaseValue = .null) throws {
        try connection.execute(
            """
            INSERT INTO \(SyncCapture.fieldsTable) (tbl, pk, col, hlc, node, parked, value) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (tbl, pk, col) DO UPDATE SET hlc = excluded.hlc, node = excluded.node,
                parked = excluded.parked, value = excluded.value
            WHERE excluded.hlc > hlc OR (excluded.hlc = hlc AND excluded.node > node)
            """,
            [.text(table), key, .text(column), .integer(stamp.time), .integer(stamp.node),
             .integer(parked ? 1 : 0), parked ? value : .null])
    }

    // MARK: Folding the log

    /// Gives every change logged since the last fold its stamp, in the order of the log — a
    /// hybrid logical clock: the moment the trigger recorded, or one more than the latest stamp
    /// this device made or saw, whichever is later — and records the stamps of the fields it
    /// changed. Entries stay in the log until the hub stored them. Returns the clock.
    @discardableResult
    func fold() throws -> Int64 {
        let node = try node()
        var clock = try integerState("clock")
        var columnsByTable: [String: [String]] = [:]
        var clockEntries: [Int64] = []
        var stamped: [(seq: Int64, table: String, key: DatabaseValue, columns: [String], stamp: SyncStamp)] = []
        // Entries not folded yet have no stamp; they follow every folded one in the log (a new
        // entry's number is one more than the largest left).
        try connection.withStatement(
            "SELECT seq, tbl, pk, kind, t, cols, stamp FROM \(SyncCapture.logTable) WHERE stamp IS NULL OR kind = 3 ORDER BY seq", []
        ) { statement in
            while try statement.step() {
                guard case .integer(let seq) = statement.value(at: 0),
                      case .integer(let rawKind) = statement.value(at: 3),
                      let kind = SyncCapture.Kind(rawValue: rawKind) else { continue }
                if kind == .clock {
                    if case .integer(let stamp) = statement.value(at: 6) { clock = max(clock, stamp) }
                    clockEntries.append(seq)
                    continue
                }
                guard case .text(let table) = statement.value(at: 1) else { continue }
                var physical: Int64 = 0
                switch statement.value(at: 4) {
                case .real(let day): physical = SyncStamp.physical(julianDay: day)
                case .integer(let day): physical = SyncStamp.physical(julianDay: Double(day))
                default: break
                }
                clock = max(physical, SyncStamp.after(clock))
                let columns: [String]
                switch kind {
                case .insert: columns = [SyncProtocol.insertedField]
                case .delete: columns = [SyncProtocol.deletedField]
                case .update:
                    guard case .text(let names) = statement.value(at: 5) else { continue }
                    columns = names.split(separator: SyncCapture.columnSeparator).map(String.init)
                case .clock, .resend: continue
                }
                stamped.append((seq, table, statement.value(at: 2), columns, SyncStamp(time: clock, node: node)))
            }
        }
        guard !stamped.isEmpty || !clockEntries.isEmpty else { return clock }
        for entry in stamped {
            var columns = entry.columns
            if columns == [SyncProtocol.insertedField] {
                // An insert writes every column of the row as the table has it.
                if columnsByTable[entry.table] == nil {
                    columnsByTable[entry.table] = try SyncCapture.tableColumns(entry.table, on: connection, includingKey: false)
                }
                columns += columnsByTable[entry.table] ?? []
            }
            for column in columns {
                try setField(table: entry.table, key: entry.key, column: column, stamp: entry.stamp)
            }
            try connection.execute("UPDATE \(SyncCapture.logTable) SET stamp = ? WHERE seq = ?",
                                   [.integer(entry.stamp.time), .integer(entry.seq)])
        }
        for seq in clockEntries {
            try connection.execute("DELETE FROM \(SyncCapture.logTable) WHERE seq = ?", [.integer(seq)])
        }
        try setState("clock", .integer(clock))
        return clock
    }

    /// A stamp for an edit the library makes now (after ``fold()``).
    func freshStamp() throws -> SyncStamp {
        let clock = max(SyncStamp.physicalNow(), SyncStamp.after(try integerState("clock")))
        try setState("clock", .integer(clock))
        return SyncStamp(time: clock, node: try node())
    }

    /// Records that the clock has seen `stamp` (a pulled edit): later local edits are stamped after it.
    func observe(_ time: Int64) throws {
        try connection.execute(
            "INSERT INTO \(SyncCapture.logTable) (tbl, kind, stamp) VALUES ('', \(SyncCapture.Kind.clock.rawValue), ?)",
            [.integer(time)])
    }

    // MARK: Pending changes

    /// The number of rows with changes the hub has not stored yet.
    func pendingRowCount(tables: [String]) throws -> Int {
        let value = try connection.scalarValue(
            "SELECT count(*) FROM (SELECT 1 FROM \(SyncCapture.logTable) WHERE kind <> 3 AND tbl IN (SELECT value FROM json_each(?)) GROUP BY tbl, pk)",
            [.text(jsonArray(tables))])
        if case .integer(let count)? = value { return Int(count) }
        return 0
    }

    /// The first rows of the log (in the order they were first changed), at most `limit` of
    /// them, up to `through`, leaving out `skipping`.
    func pendingRows(limit: Int, through: Int64, tables: [String], skipping: Set<SyncRowKey>) throws -> [SyncRowKey] {
        var rows: [SyncRowKey] = []
        var seen = skipping
        try connection.withStatement(
            "SELECT tbl, pk FROM \(SyncCapture.logTable) WHERE kind <> 3 AND seq <= ? AND tbl IN (SELECT value FROM json_each(?)) ORDER BY seq",
            [.integer(through), .text(jsonArray(tables))]
        ) { statement in
            while try statement.step() {
                guard case .text(let table) = statement.value(at: 0) else { continue }
                let row = SyncRowKey(table: table, key: statement.value(at: 1))
                if seen.insert(row).inserted {
                    rows.append(row)
                    if rows.count == limit { break }
                }
            }
        }
        return rows
    }

    /// A folded log entry: its number and stamp, which together name it even after the number
    /// is reused (a number is one more than the largest left in the log).
    struct Entry: Hashable, Sendable {
        var seq: Int64
        var stamp: Int64
    }

    /// Every folded entry of `rows` up to `through`.
    func entries(of rows: Set<SyncRowKey>, through: Int64, tables: [String]) throws -> [Entry] {
        var entries: [Entry] = []
        try connection.withStatement(
            "SELECT seq, stamp, tbl, pk FROM \(SyncCapture.logTable) WHERE kind <> 3 AND seq <= ? AND stamp IS NOT NULL AND tbl IN (SELECT value FROM json_each(?)) ORDER BY seq",
            [.integer(through), .text(jsonArray(tables))]
        ) { statement in
            while try statement.step() {
                guard case .integer(let seq) = statement.value(at: 0), case .integer(let stamp) = statement.value(at: 1),
                      case .text(let table) = statement.value(at: 2) else { continue }
                if rows.contains(SyncRowKey(table: table, key: statement.value(at: 3))) { entries.append(Entry(seq: seq, stamp: stamp)) }
            }
        }
        return entries
    }

    /// Removes log entries the hub stored — those exactly: an entry made since, which may have
    /// been given a number of one removed meanwhile (another engine on the file), has another stamp.
    func removeEntries(_ entries: [Entry]) throws {
        for chunk in stride(from: 0, to: entries.count, by: 500) {
            let slice = entries[chunk..<min(chunk + 500, entries.count)]
            try connection.execute(
                """
                DELETE FROM \(SyncCapture.logTable) WHERE (seq, stamp) IN
                    (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
                """,
                [.text("[" + slice.map { "[\($0.seq),\($0.stamp)]" }.joined(separator: ",") + "]")])
        }
    }

    /// A row's state to push: every stamped field, with the value the table holds (or the
    /// parked value of a column it lacks). A row the stamps say exists but the table does not
    /// hold (removed by a cascade while pulled rows were applied) is recorded as deleted now.
    ///
    /// Only `columns` (the model's) and parked columns (which came from the hub) are sent: a
    /// column the model dropped, which the table keeps, is not the hub's business.
    func outgoingRow(table: String, key: DatabaseValue, keyColumn: String, columns: Set<String>) throws -> SyncRow {
        let stamps = try fields(table: table, key: key)
        let row = try rowValues(table: table, where: keyColumn, is: key)
        let exists = row != nil
        let current = row ?? [:]
        var fields: [String: SyncField] = [:]
        for (column, field) in stamps {
            if SyncProtocol.isRowStateField(column) {
                fields[column] = SyncField(value: .null, stamp: field.stamp)
            } else if column.lowercased() == keyColumn.lowercased() {
                continue
            } else if field.parked {
                // A value waiting (for its column, its parent, or a new insert): the table's is not it.
                fields[column] = SyncField(value: field.value, stamp: field.stamp)
            } else if let value = current[column], columns.contains(column) {
                fields[column] = SyncField(value: value, stamp: field.stamp)
            }
        }
        let alive = SyncRow.isAlive(inserted: fields[SyncProtocol.insertedField]?.stamp,
                                    deleted: fields[SyncProtocol.deletedField]?.stamp)
        // (A row waiting in the fields table — for its parent, or for this device's table — is
        // not missing: its values are parked.)
        if !exists && alive && !stamps.isEmpty && !stamps.values.contains(where: \.parked) {
            let stamp = try freshStamp()
            try setField(table: table, key: key, column: SyncProtocol.deletedField, stamp: stamp)
            fields[SyncProtocol.deletedField] = SyncField(value: .null, stamp: stamp)
        }
        return SyncRow(table: table, key: key, fields: fields)
    }

    // MARK: Applying pulled rows

    /// Merges one pulled row: each field whose stamp is later than the device's replaces it;
    /// then the row is inserted, updated or deleted to match. Returns whether the table changed.
    ///
    /// The fields table keeps a value (parked) wherever the table cannot: for a column the table
    /// does not have (yet), for a table not created yet, and for a row that does not exist —
    /// deleted here by a pulled delete while this device had later edits of some of its columns,
    /// which count again if another device inserts the row anew.
    func apply(_ row: SyncRow, keyColumn: String?, columns: Set<String>) throws -> Bool {
        let local = try fields(table: row.table, key: row.key)
        var winners: [String: SyncField] = [:]
        for (column, field) in row.fields where local[column].map({ field.stamp > $0.stamp }) ?? true {
            winners[column] = field
        }
        guard !winners.isEmpty else { return false }
        let lowerColumns = Set(columns.map { $0.lowercased() })
        func merged(_ name: String) -> SyncStamp? {
            [local[name]?.stamp, winners[name]?.stamp].compactMap { $0 }.max()
        }
        let alive = SyncRow.isAlive(inserted: merged(SyncProtocol.insertedField), deleted: merged(SyncProtocol.deletedField))
        guard let keyColumn, !columns.isEmpty else {
            for (column, field) in winners { try record(row, column, field, parked: !SyncProtocol.isRowStateField(column)) }
            return false
        }
        let table = SQLIdentifier.quote(row.table)
        let quotedKey = SQLIdentifier.quote(keyColumn)
        let lowerKey = keyColumn.lowercased()
        func inTable(_ column: String) -> Bool {
            !SyncProtocol.isRowStateField(column) && lowerColumns.contains(column.lowercased()) && column.lowercased() != lowerKey
        }
        let current = try rowValues(table: row.table, where: keyColumn, is: row.key)
        guard alive else {
            // Every value of the row is kept in the fields table, the pulled ones and the
            // table's: an edit later than the delete counts again if the row is inserted anew.
            for (column, field) in winners { try record(row, column, field, parked: !SyncProtocol.isRowStateField(column)) }
            guard let current else { return false }
            for (column, field) in local where winners[column] == nil && !field.parked && inTable(column) {
                try connection.execute(
                    "UPDATE \(SyncCapture.fieldsTable) SET parked = 1, value = ? WHERE tbl = ? AND pk = ? AND col = ?",
                    [current[column] ?? .null, .text(row.table), row.key, .text(column)])
            }
            try writingPulled(table: row.table, key: row.key, "DELETE FROM \(table) WHERE \(quotedKey) = ?", [row.key])
            return true
        }
        for (column, field) in winners {
            try record(row, column, field, parked: !SyncProtocol.isRowStateField(column) && !inTable(column))
        }
        if current != nil {
            let written = winners.filter { inTable($0.key) }.map { ($0.key, $0.value.value) }
            return try writePulledValues(table: row.table, keyColumn: keyColumn, key: row.key, values: written, exists: true)
        }
        // Inserted anew (or first seen): the pulled values — also of columns whose stamp is not
        // later than this device's, when this device has no value for them — the values kept
        // aside here where this device's edit is later, and the other columns' defaults.
        var values: [String: DatabaseValue] = [:]
        for (column, field) in row.fields where inTable(column) { values[column] = field.value }
        for (column, field) in local where field.parked && inTable(column) {
            if let pulled = row.fields[column], pulled.stamp > field.stamp { continue }
            values[column] = field.value
        }
        try writePulledValues(table: row.table, keyColumn: keyColumn, key: row.key, values: values.map { ($0.key, $0.value) }, exists: false)
        if local.values.contains(where: \.parked) { try unpark(table: row.table, key: row.key, columns: Array(values.keys)) }
        return true
    }

    /// Records a pulled field's stamp (which is later than this device's), and its value when
    /// the table cannot hold it.
    private func record(_ row: SyncRow, _ column: String, _ field: SyncField, parked: Bool) throws {
        try setField(table: row.table, key: row.key, column: column, stamp: field.stamp, parked: parked, value: field.value)
    }

    /// Writes the parked values of `table` whose columns it now has, without recording them as
    /// local changes: after ``createTable()`` added a column or created the table, and at each
    /// apply, for rows waiting for their parent or pulled by an engine without the model. A row
    /// the stamps say exists but the table lacks is inserted. Values of a row that does not
    /// exist stay parked, and so do those whose write fails (a parent that is not there yet):
    /// they are tried again at the next apply. Returns the number of rows written.
    @discardableResult
    func applyParked(table: String, keyColumn: String, columns: [String]) throws -> Set<SyncRowKey> {
        let lower = Set(columns.map { $0.lowercased() })
        var keys: [DatabaseValue] = []
        var seen = Set<DatabaseValue>()
        try connection.withStatement(
            "SELECT pk, col FROM \(SyncCapture.fieldsTable) WHERE tbl = ? AND parked = 1", [.text(table)]
        ) { statement in
            while try statement.step() {
                guard case .text(let column) = statement.value(at: 1), lower.contains(column.lowercased()) else { continue }
                let key = statement.value(at: 0)
                if seen.insert(key).inserted { keys.append(key) }
            }
        }
        guard !keys.isEmpty else { return [] }
        let quotedTable = SQLIdentifier.quote(table)
        let quotedKey = SQLIdentifier.quote(keyColumn)
        var written = Set<SyncRowKey>()
        for key in keys {
            let stamps = try fields(table: table, key: key)
            guard SyncRow.isAlive(inserted: stamps[SyncProtocol.insertedField]?.stamp,
                                  deleted: stamps[SyncProtocol.deletedField]?.stamp) else { continue }
            let parked = stamps.filter { column, field in
                field.parked && lower.contains(column.lowercased()) && column.lowercased() != keyColumn.lowercased()
            }.sorted { $0.key < $1.key }
            guard !parked.isEmpty else { continue }
            do {
                let exists = try connection.scalarValue("SELECT 1 FROM \(quotedTable) WHERE \(quotedKey) = ?", [key]) != nil
                try writePulledValues(table: table, keyColumn: keyColumn, key: key,
                                      values: parked.map { ($0.key, $0.value.value) }, exists: exists)
            } catch is DatabaseError {
                // Only this statement was undone; the values wait for the next try.
                continue
            }
            written.insert(SyncRowKey(table: table, key: key))
            try unpark(table: table, key: key, columns: parked.map(\.key))
        }
        return written
    }

    /// Makes a row wait, parked, for the parent its foreign key (`fromColumns`) names, without
    /// recording a change, and returns its key. When those columns may be NULL, only their
    /// values wait: the row stays, its foreign key NULL meanwhile, so nothing refers to a row
    /// that left. Otherwise the row leaves its table with every value parked — after the rows
    /// of synchronized tables that refer to it, which wait the same way, so that no `ON DELETE`
    /// action touches them.
    /// - Throws: ``ActiveObjectError/syncRefused(reason:)`` when a row of a table that is not
    ///   synchronized refers to it.
    @discardableResult
    func park(table: String, keyColumn: String, rowID: Int64, fromColumns: [String], keyColumns: [String: String]) throws -> DatabaseValue? {
        guard let values = try rowValues(table: table, where: "rowid", is: .integer(rowID)), let key = values[keyColumn] else { return nil }
        let stamps = try fields(table: table, key: key)
        let nullable = try connection.rows("SELECT name FROM pragma_table_info(?) WHERE \"notnull\" = 0", [.text(table)])
            .compactMap { row -> String? in if case .text(let name) = row.values[0] { return name.lowercased() } else { return nil } }
        let waiting = fromColumns.allSatisfy { Set(nullable).contains($0.lowercased()) }
            ? fromColumns : Array(values.keys).filter { $0.lowercased() != keyColumn.lowercased() }
        for column in waiting where stamps[column] != nil {
            try connection.execute(
                "UPDATE \(SyncCapture.fieldsTable) SET parked = 1, value = ? WHERE tbl = ? AND pk = ? AND col = ?",
                [values[column] ?? .null, .text(table), key, .text(column)])
        }
        if waiting == fromColumns {
            let assignments = fromColumns.map { "\(SQLIdentifier.quote($0)) = NULL" }.joined(separator: ", ")
            try writingPulled(table: table, key: key, "UPDATE \(SQLIdentifier.quote(table)) SET \(assignments) WHERE rowid = ?",
                              [.integer(rowID)])
            return key
        }
        // The rows that refer to this one wait first.
        for reference in try connection.rows("""
            SELECT m.name, f."from", f.id FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS f
            WHERE m.type = 'table' AND f."table" = ? COLLATE NOCASE
            """, [.text(table)]) {
            guard case .text(let child) = reference.values[0], case .text(let column) = reference.values[1] else { continue }
            let rowIDs = try connection.rows(
                "SELECT rowid FROM \(SQLIdentifier.quote(child)) WHERE \(SQLIdentifier.quote(column)) = ?", [key])
            guard !rowIDs.isEmpty else { continue }
            guard let childKey = keyColumns[child] else {
                throw ActiveObjectError.syncRefused(
                    reason: "the row \(key) of \(table) waits for its parent, and rows of \(child), which is not synchronized, refer to it")
            }
            for row in rowIDs {
                guard case .integer(let childRowID) = row.values[0] else { continue }
                try park(table: child, keyColumn: childKey, rowID: childRowID, fromColumns: [column], keyColumns: keyColumns)
            }
        }
        try writingPulled(table: table, key: key, "DELETE FROM \(SQLIdentifier.quote(table)) WHERE rowid = ?", [.integer(rowID)])
        return key
    }

    /// A row's values by column name, or nil when `table` has no row whose `column` is `value`.
    func rowValues(table: String, where column: String, is value: DatabaseValue) throws -> [String: DatabaseValue]? {
        try connection.withStatement(
            "SELECT * FROM \(SQLIdentifier.quote(table)) WHERE \(SQLIdentifier.quote(column)) = ?", [value]
        ) { statement in
            guard try statement.step() else { return nil }
            var values: [String: DatabaseValue] = [:]
            for index in 0..<statement.columnCount { values[statement.columnName(index)] = statement.value(at: index) }
            return values
        }
    }

    /// Writes values that came from the hub into a row, without recording a local change: an
    /// UPDATE of those that differ when the row `exists`, else an INSERT of the row with them
    /// (the other columns get their defaults). Returns whether the table changed.
    @discardableResult
    func writePulledValues(table: String, keyColumn: String, key: DatabaseValue,
                           values: [(column: String, value: DatabaseValue)], exists: Bool) throws -> Bool {
        let values = values.sorted { $0.column < $1.column }
        let quotedTable = SQLIdentifier.quote(table)
        let quotedKey = SQLIdentifier.quote(keyColumn)
        let columns = values.map { SQLIdentifier.quote($0.column) }
        if exists {
            guard !values.isEmpty else { return false }
            let assignments = columns.map { "\($0) = ?" }.joined(separator: ", ")
            let differs = columns.map { "\($0) IS NOT ?" }.joined(separator: " OR ")
            return try writingPulled(table: table, key: key,
                                     "UPDATE \(quotedTable) SET \(assignments) WHERE \(quotedKey) = ? AND (\(differs))",
                                     values.map(\.value) + [key] + values.map(\.value))
        }
        let placeholders = Array(repeating: "?", count: values.count + 1).joined(separator: ", ")
        return try writingPulled(table: table, key: key,
                                 "INSERT INTO \(quotedTable) (\(([quotedKey] + columns).joined(separator: ", "))) VALUES (\(placeholders))",
                                 [key] + values.map(\.value))
    }

    /// The table holds these values now: they are no longer kept in the fields table.
    func unpark(table: String, key: DatabaseValue, columns: [String]) throws {
        try connection.execute(
            "UPDATE \(SyncCapture.fieldsTable) SET parked = 0, value = NULL WHERE tbl = ? AND pk = ? AND col IN (SELECT value FROM json_each(?))",
            [.text(table), key, .text(jsonArray(columns))])
    }

    /// Runs a statement that writes a pulled row, and removes what the triggers recorded of that
    /// row: it came from the hub, it is not a local change. What the statement did to other
    /// rows — a cascade of a pulled delete, a user's trigger — stays recorded, as the local
    /// change it is. Returns whether the statement changed a row.
    @discardableResult
    func writingPulled(table: String, key: DatabaseValue, _ sql: String, _ arguments: [DatabaseValue]) throws -> Bool {
        let before = try lastSequence()
        try connection.execute(sql, arguments)
        let changed = connection.lastChanges > 0
        if changed {
            try connection.execute("DELETE FROM \(SyncCapture.logTable) WHERE seq > ? AND tbl = ? AND pk = ?",
                                   [.integer(before), .text(table), key])
        }
        return changed
    }
}

extension SyncLedger {
    /// A foreign key that fails: the child table, its row, and which of its foreign keys.
    struct Violation: Hashable {
        var table: String
        var rowID: DatabaseValue
        var foreignKey: Int64
    }

    /// The tables that declare a foreign key (the only ones `foreign_key_check` looks at).
    func tablesWithForeignKeys() throws -> [String] {
        try connection.rows("""
            SELECT DISTINCT m.name FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS f
            WHERE m.type = 'table' ORDER BY m.name
            """).compactMap { row in
            if case .text(let name) = row.values[0] { return name }
            return nil
        }
    }

    /// The foreign keys that fail now in `tables`.
    func violations(in tables: [String]) throws -> Set<Violation> {
        var found = Set<Violation>()
        for table in tables {
            for row in try connection.rows("PRAGMA foreign_key_check(\(SQLIdentifier.quote(table)))") {
                guard case .integer(let foreignKey) = row.values[3] else { continue }
                found.insert(Violation(table: table, rowID: row.values[1], foreignKey: foreignKey))
            }
        }
        return found
    }

    /// Brings back every foreign key of `tables` that held before pulled rows were applied with
    /// the checks deferred (`before`: those that already failed, which are left alone):
    ///
    /// - a row whose parent another device deleted — the parent's stamps here say so — gets
    ///   what its foreign key declares for a deleted parent (`SET NULL`), or is deleted
    ///   (`CASCADE`, and also `NO ACTION`, `RESTRICT` and `SET DEFAULT`: the delete already
    ///   happened elsewhere). In a synchronized table these are local edits, recorded and
    ///   pushed like any other, so every device ends with the same rows;
    /// - a row of a synchronized table (`keyColumns`) whose parent has not arrived yet (pushed
    ///   after it by its device) waits, parked, and is written again at the next apply.
    /// - Throws: ``ActiveObjectError/syncRefused(reason:)`` when a violation cannot be
    ///   repaired (a `WITHOUT ROWID` child table), ``DatabaseError``.
    /// Returns the rows that wait, by table and key.
    @discardableResult
    func repairForeignKeys(in tables: [String], before: Set<Violation>, keyColumns: [String: String]) throws -> Set<SyncRowKey> {
        var waiting = Set<SyncRowKey>()
        var previous: Set<Violation>?
        while true {
            let violations = try violations(in: tables).subtracting(before)
            if violations.isEmpty { return waiting }
            // Each round repairs or parks rows, so the same violations twice means no progress.
            guard violations != previous else {
                throw ActiveObjectError.syncRefused(reason: "foreign keys still fail after repairing the rows whose parents were deleted")
            }
            previous = violations
            for violation in violations.sorted(by: { ($0.table, $0.foreignKey) < ($1.table, $1.foreignKey) }) {
                guard case .integer(let rowID) = violation.rowID else {
                    throw ActiveObjectError.syncRefused(
                        reason: "a row of the WITHOUT ROWID table \(violation.table) lost its parent, and cannot be repaired")
                }
                let keys = try connection.rows("SELECT \"from\", \"table\", on_delete FROM pragma_foreign_key_list(?) WHERE id = ?",
                                               [.text(violation.table), .integer(violation.foreignKey)])
                let quotedTable = SQLIdentifier.quote(violation.table)
                let fromColumns = keys.compactMap { row -> String? in
                    if case .text(let column) = row.values[0] { return column }
                    return nil
                }
                // Already repaired this round (a row that failed two foreign keys).
                guard try connection.scalarValue("SELECT 1 FROM \(quotedTable) WHERE rowid = ?", [.integer(rowID)]) != nil else { continue }
                if let keyColumn = keyColumns[violation.table],
                   try !parentIsDeleted(child: violation.table, rowID: rowID, fromColumns: fromColumns,
                                        parent: keys.first?.values[1]) {
                    if let key = try park(table: violation.table, keyColumn: keyColumn, rowID: rowID,
                                          fromColumns: fromColumns, keyColumns: keyColumns) {
                        waiting.insert(SyncRowKey(table: violation.table, key: key))
                    }
                } else if let first = keys.first, first.values[2] == .text("SET NULL") {
                    let assignments = fromColumns.map { "\(SQLIdentifier.quote($0)) = NULL" }.joined(separator: ", ")
                    try connection.execute("UPDATE \(quotedTable) SET \(assignments) WHERE rowid = ?", [.integer(rowID)])
                } else {
                    try connection.execute("DELETE FROM \(quotedTable) WHERE rowid = ?", [.integer(rowID)])
                }
            }
        }
    }

    /// Whether the parent a row's foreign key names was deleted by a synchronized delete (its
    /// stamps here say it does not exist), as opposed to not having arrived yet.
    private func parentIsDeleted(child: String, rowID: Int64, fromColumns: [String], parent: DatabaseValue?) throws -> Bool {
        guard fromColumns.count == 1, case .text(let parentTable)? = parent,
              let value = try connection.scalarValue(
                "SELECT \(SQLIdentifier.quote(fromColumns[0])) FROM \(SQLIdentifier.quote(child)) WHERE rowid = ?", [.integer(rowID)])
        else { return true }
        let stamps = try fields(table: parentTable, key: value)
        guard !stamps.isEmpty else { return false }
        return !SyncRow.isAlive(inserted: stamps[SyncProtocol.insertedField]?.stamp, deleted: stamps[SyncProtocol.deletedField]?.stamp)
    }
}

/// A row's identity in the bookkeeping tables.
struct SyncRowKey: Hashable {
    var table: String
    var key: DatabaseValue
}

/// A JSON array of strings, for `json_each`.
func jsonArray(_ strings: [String]) -> String {
    (try? String(decoding: JSONEncoder().encode(strings), as: UTF8.self)) ?? "[]"
}
