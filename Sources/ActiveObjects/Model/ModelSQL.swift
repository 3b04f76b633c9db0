import Foundation

/// How a model's rows are identified.
enum KeyShape: Equatable {
    /// `id` is the table's `INTEGER PRIMARY KEY` named `column` (round 1: `primaryKey` names a
    /// column that is not a declared `@Column`), or the hidden rowid when `column` is `rowid`
    /// (tables without a declared key).
    case rowID(column: String, isHidden: Bool)
    /// The key is one or more declared `@Column`s (a natural or composite key), in key order;
    /// `id` is the rowid when the table has one.
    case columns(slots: [Int])

    /// Names SQLite accepts for a table's hidden rowid.
    static let rowIDNames: Set<String> = ["rowid", "_rowid_", "oid"]
}

/// The SQL of one model for one table layout (with or without a rowid), built once.
///
/// Rows are identified by the key: `"id" = ?` for rowid models, `"a" = ? AND "b" = ?` for
/// natural and composite keys. Every SELECT starts with the id expression (the rowid, or
/// `NULL` for `WITHOUT ROWID` tables), then the columns in slot order.
final class ModelSQL: @unchecked Sendable {
    // Safety of @unchecked Sendable: immutable after init, except `updates` and
    // `batchInserts`, guarded by `lock`.
    let hasRowID: Bool
    /// The quoted id expression in SELECTs: the rowid column, `"rowid"`, or `NULL`.
    let idExpression: String
    /// `"id", "name", "age"`.
    let selectList: String
    /// `SELECT "id", … FROM "person"`.
    let selectSQL: String
    /// The condition naming one row by its key, and its parameters' count.
    let keyCondition: String
    let findByKeySQL: SharedSQL
    /// Find by rowid (nil without a rowid).
    let findByRowIDSQL: SharedSQL?
    let insertSQL: SharedSQL
    /// INSERT with the rowid first (rowid models only).
    let insertWithIDSQL: SharedSQL?
    let upsertSQL: SharedSQL
    let upsertWithIDSQL: SharedSQL?
    /// Insert with the rowid first, or replace every column of the row with that rowid (rowid
    /// models only: an `id` set by hand).
    let saveWholeRowSQL: SharedSQL?
    let deleteSQL: SharedSQL
    let existsSQL: SharedSQL
    /// Whether an upsert returns the rowid.
    let upsertReturnsID: Bool
    /// Optimistic locking (a `.lockVersion` column): the key condition with
    /// `AND "lockVersion" = ?`, and the statements that use it. Nil without such a column.
    let locked: LockedSQL?
    /// The role columns an upsert returns after the rowid (if it returns one), in this order:
    /// an upsert that meets an existing row keeps its `.createdAt` and increments its
    /// `.lockVersion`, so the object learns the values the row holds.
    let upsertReturnedSlots: [Int]

    /// The statements of a model with a `.lockVersion` column that check the version.
    struct LockedSQL: Sendable {
        /// `<key> AND "lockVersion" = ?`.
        let condition: String
        let deleteSQL: SharedSQL
        let existsSQL: SharedSQL
    }

    private let quotedTable: String
    private let columnNames: [String]
    private let lock = NSLock()
    private var updates: [[Int]: SharedSQL] = [:]
    private var batchInserts: [BatchShape: SharedSQL] = [:]

    /// The shape of a multi-row INSERT: its row count, and whether it writes the rowid too.
    private struct BatchShape: Hashable {
        let rows: Int
        let explicitIDs: Bool
    }

    init(table quotedTable: String, columns names: [String], key: KeyShape, hasRowID: Bool,
         roles: ModelRoles = ModelRoles()) {
        self.quotedTable = quotedTable
        self.columnNames = names
        self.hasRowID = hasRowID
        let table = quotedTable
        switch key {
        case .rowID(let column, _):
            // Without a rowid: a read-only model over a view that lacks the key column.
            idExpression = hasRowID ? SQLIdentifier.quote(column) : "NULL"
            keyCondition = "\(idExpression) = ?"
        case .columns(let slots):
            idExpression = hasRowID ? "\"rowid\"" : "NULL"
            keyCondition = slots.map { "\(names[$0]) = ?" }.joined(separator: " AND ")
        }
        selectList = ([idExpression] + names).joined(separator: ", ")
        selectSQL = "SELECT \(selectList) FROM \(table)"
        findByKeySQL = SharedSQL("\(selectSQL) WHERE \(keyCondition)")
        deleteSQL = SharedSQL("DELETE FROM \(table) WHERE \(keyCondition)")
        existsSQL = SharedSQL("SELECT 1 FROM \(table) WHERE \(keyCondition)")
        let insert = Self.insertSQL(table: table, columns: names)
        insertSQL = SharedSQL(insert)
        let keyCondition = self.keyCondition
        locked = roles.lockVersion.map { slot in
            let condition = "\(keyCondition) AND \(names[slot]) = ?"
            return LockedSQL(condition: condition, deleteSQL: SharedSQL("DELETE FROM \(table) WHERE \(condition)"),
                             existsSQL: SharedSQL("SELECT 1 FROM \(table) WHERE \(condition)"))
        }
        // On conflict, an upsert keeps the row's creation date (unless `keepingCreation` is
        // false: an import inside `withoutTimestamps` writes the date it holds) and counts one
        // more version.
        func assignment(_ slot: Int, keepingCreation: Bool) -> String? {
            if slot == roles.createdAt && keepingCreation { return nil }
            if slot == roles.lockVersion { return "\(names[slot]) = \(table).\(names[slot]) + 1" }
            return "\(names[slot]) = excluded.\(names[slot])"
        }
        upsertReturnedSlots = [roles.createdAt, roles.lockVersion].compactMap { $0 }
        let returnedRoles = upsertReturnedSlots.map { names[$0] }
        let idExpression = self.idExpression
        let insertWithIDText = Self.insertSQL(table: table, columns: [idExpression] + names)
        /// The upserts (plain, with the rowid, and the whole-row save of an id set by hand).
        func makeUpserts(keepingCreation: Bool) -> Upserts {
            // Upsert never uses REPLACE, which deletes the old row (and cascades).
            switch key {
            case .rowID:
                let key = idExpression
                let assignments = names.indices.compactMap { assignment($0, keepingCreation: keepingCreation) }
                    .joined(separator: ", ")
                let returning = " RETURNING " + ([key] + returnedRoles).joined(separator: ", ")
                // Without other columns, a no-op assignment of the key: `DO NOTHING` would
                // return no row, and the object would not learn the id of the row it met.
                let set = assignments.isEmpty ? "\(key) = excluded.\(key)" : assignments
                // The whole-row save returns the role columns too (the object takes them); the
                // same no-op assignment makes a conflict count as a changed row, so that a row
                // SQLite ignored (changes() 0) is told apart.
                return Upserts(upsert: SharedSQL("\(insert) ON CONFLICT DO UPDATE SET \(set)\(returning)"),
                               upsertWithID: SharedSQL("\(insertWithIDText) ON CONFLICT DO UPDATE SET \(set)\(returning)"),
                               saveWholeRow: SharedSQL("\(insertWithIDText) ON CONFLICT(\(key)) DO UPDATE SET \(set)"
                                                       + (returnedRoles.isEmpty ? "" : returning)))
            case .columns(let slots):
                let keys = slots.map { names[$0] }.joined(separator: ", ")
                let assignments = names.indices.filter { !slots.contains($0) }
                    .compactMap { assignment($0, keepingCreation: keepingCreation) }.joined(separator: ", ")
                // Every column in the key (a join table): a no-op assignment of the key, so that
                // `RETURNING` gives the existing row's rowid (`DO NOTHING` returns no row).
                let firstKey = names[slots[0]]
                let conflict = "ON CONFLICT(\(keys)) DO UPDATE SET "
                    + (assignments.isEmpty ? "\(firstKey) = excluded.\(firstKey)" : assignments)
                let returned = (hasRowID ? ["\"rowid\""] : []) + returnedRoles
                return Upserts(upsert: SharedSQL("\(insert) \(conflict)"
                                                 + (returned.isEmpty ? "" : " RETURNING " + returned.joined(separator: ", "))),
                               upsertWithID: nil, saveWholeRow: nil)
            }
        }
        let upserts = makeUpserts(keepingCreation: true)
        importingUpserts = roles.createdAt == nil ? nil : makeUpserts(keepingCreation: false)
        upsertSQL = upserts.upsert
        upsertWithIDSQL = upserts.upsertWithID
        saveWholeRowSQL = upserts.saveWholeRow
        switch key {
        case .rowID:
            findByRowIDSQL = findByKeySQL
            insertWithIDSQL = SharedSQL(insertWithIDText)
            upsertReturnsID = true
        case .columns:
            findByRowIDSQL = hasRowID ? SharedSQL("\(selectSQL) WHERE \"rowid\" = ?") : nil
            insertWithIDSQL = nil
            upsertReturnsID = hasRowID
        }
    }

    /// The upsert statements of one kind (see ``importingUpserts``).
    struct Upserts: Sendable {
        let upsert: SharedSQL
        let upsertWithID: SharedSQL?
        let saveWholeRow: SharedSQL?
    }

    /// For a model with a `.createdAt` column: the upserts that write the creation date the
    /// object holds when they meet a row (inside `withoutTimestamps`: an import keeps its
    /// dates). Nil for other models.
    let importingUpserts: Upserts?

    private static func insertSQL(table: String, columns: [String]) -> String {
        if columns.isEmpty { return "INSERT INTO \(table) DEFAULT VALUES" }
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(marks))"
    }

    /// `INSERT INTO "t" ("a", "b"[, id]) VALUES (?, ?), (?, ?)…` with `rows` rows, the id
    /// column last when `explicitIDs`; cached, so that every full chunk of ``BatchInsert`` finds
    /// its statement without hashing kilobytes of SQL (the last 16 shapes are kept).
    func batchInsertSQL(rows: Int, explicitIDs: Bool) -> SharedSQL {
        let shape = BatchShape(rows: rows, explicitIDs: explicitIDs)
        lock.lock()
        defer { lock.unlock() }
        if let sql = batchInserts[shape] { return sql }
        let columns = columnNames + (explicitIDs ? [idExpression] : [])
        let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let sql = SharedSQL("INSERT INTO \(quotedTable) (\(columns.joined(separator: ", "))) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", "))
        if batchInserts.count >= 16 { batchInserts.removeAll() }
        batchInserts[shape] = sql
        return sql
    }

    /// `UPDATE "t" SET "a" = ?, "b" = ? WHERE <key>` for the given slots, cached (the first
    /// 256 shapes; rarer ones are built per call). With `checkingVersion`, the condition also
    /// names the version the row must hold (``locked``), one more parameter after the key's.
    func updateSQL(slots: [Int], checkingVersion: Bool = false) -> SharedSQL {
        let condition = checkingVersion ? (locked?.condition ?? keyCondition) : keyCondition
        // The cache key: the slots, and -1 for the version check (never a slot).
        let shape = checkingVersion ? slots + [-1] : slots
        lock.lock()
        defer { lock.unlock() }
        if let sql = updates[shape] { return sql }
        let assignments = slots.map { "\(columnNames[$0]) = ?" }.joined(separator: ", ")
        let sql = SharedSQL("UPDATE \(quotedTable) SET \(assignments) WHERE \(condition)")
        if updates.count < 256 { updates[shape] = sql }
        return sql
    }

    /// `UPDATE "t" SET <slots>, "v" = "v" + 1 WHERE <key> RETURNING <returned>`: the whole-row
    /// update of an object that does not hold its row (an `id` set by hand) of a model with
    /// role columns — the row keeps its creation date, counts a version, and the object learns
    /// both (built per call: rare).
    func wholeRowUpdateSQL(slots: [Int], incrementing version: Int?, returning returned: [Int]) -> SharedSQL {
        let assignments = slots.map { "\(columnNames[$0]) = ?" }
            + (version.map { ["\(columnNames[$0]) = \(columnNames[$0]) + 1"] } ?? [])
        return SharedSQL("UPDATE \(quotedTable) SET \(assignments.joined(separator: ", ")) WHERE \(keyCondition)"
            + (returned.isEmpty ? "" : " RETURNING " + returned.map { columnNames[$0] }.joined(separator: ", ")))
    }

    /// `UPDATE "t" SET <slots> WHERE <key> [AND version] AND <extra>`: the soft delete and the
    /// restore of one row (built per call: they are rare next to saves).
    func conditionalUpdateSQL(slots: [Int], checkingVersion: Bool, extraCondition: String?) -> SharedSQL {
        let condition = checkingVersion ? (locked?.condition ?? keyCondition) : keyCondition
        let assignments = slots.map { "\(columnNames[$0]) = ?" }.joined(separator: ", ")
        return SharedSQL("UPDATE \(quotedTable) SET \(assignments) WHERE \(condition)"
            + (extraCondition.map { " AND \($0)" } ?? ""))
    }
}
