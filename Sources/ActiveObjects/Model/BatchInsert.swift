import CSQLite

/// Inserts many rows of one model with multi-row `INSERT … VALUES (…), (…)` statements,
/// chunked under SQLite's limit on bound variables, and finds each row's rowid.
///
/// Runs on the writer connection, inside a transaction (the caller's): either every row is
/// inserted or the error is thrown and the caller rolls back. It never touches the objects:
/// rows come from a `bind` closure, so that the same engine serves the synchronous form
/// (binding straight from the objects) and the async form (binding values encoded on the
/// caller's actor).
struct BatchInsert {
    /// How a row's rowid becomes known.
    enum RowIdentity {
        /// SQLite hands it out (the table's largest rowid plus one, in insertion order).
        case assigned
        /// Set by hand on the object (`id` of a rowid model): written with the row.
        case setByHand(Int64)
        /// The value of a natural key that is the table's rowid alias (`INTEGER PRIMARY KEY`
        /// numbered by hand): the row's rowid is its key.
        case key(Int64)
    }

    let schema: ModelSchema
    let sql: ModelSQL
    /// Each row's identity, in row order.
    let identities: [RowIdentity]
    /// Binds row `row`'s column values to the parameters starting at `first`.
    let bind: (_ statement: Statement, _ row: Int, _ first: Int32) throws -> Void

    /// The most rows one statement holds (fewer when the columns would exceed the variable limit).
    static let maximumRowsPerStatement = 200

    /// Inserts every row; returns each row's rowid (nil for `WITHOUT ROWID` tables).
    /// - Throws: ``DatabaseError`` (constraints…), ``ActiveObjectError/invalidValue(table:column:reason:)``.
    /// - Throws: ``ActiveObjectError/notInserted(table:)`` when SQLite ignored any row (the
    ///   caller's transaction then rolls back: nothing is written); the errors of SQLite.
    func run(on access: Access) throws -> [Int64?] {
        let connection = access.connection
        var result = [Int64?](repeating: nil, count: identities.count)
        var byHand: [Int] = [], keyed: [Int] = [], assigned: [Int] = []
        for (row, identity) in identities.enumerated() {
            switch identity {
            case .setByHand(let id): byHand.append(row); result[row] = id
            case .key(let id): keyed.append(row); result[row] = id
            case .assigned: assigned.append(row)
            }
        }
        // Rows whose rowid is known first, so that the rowids SQLite hands out follow them.
        if !byHand.isEmpty { try insert(byHand, explicitIDs: true, tracking: false, on: connection, into: &result) }
        if !keyed.isEmpty { try insert(keyed, explicitIDs: false, tracking: false, on: connection, into: &result) }
        if !assigned.isEmpty {
            try insert(assigned, explicitIDs: false, tracking: sql.hasRowID, on: connection, into: &result)
        }
        return result
    }

    private func insert(_ rows: [Int], explicitIDs: Bool, tracking track: Bool, on connection: Connection,
                        into result: inout [Int64?]) throws {
        let columnCount = schema.columns.count + (explicitIDs ? 1 : 0)
        guard !schema.columns.isEmpty else {
            // No column: one DEFAULT VALUES insert per row.
            for row in rows { result[row] = try insertOne(row, on: connection) ?? result[row] }
            return
        }
        let variableLimit = Int(connection.setLimit(SQLITE_LIMIT_VARIABLE_NUMBER, -1))
        let perStatement = max(1, min(Self.maximumRowsPerStatement, variableLimit / columnCount))
        // The writer is ours for the whole transaction: nothing else inserts between chunks.
        var before = track ? try nextRowIDBase(on: connection) : 0
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(start + perStatement, rows.count)]
            let statementSQL = sql.batchInsertSQL(rows: chunk.count, explicitIDs: explicitIDs)
            try connection.withStatement(statementSQL, binding: { statement in
                for (position, row) in chunk.enumerated() {
                    let first = Int32(position * columnCount + 1)
                    try bind(statement, row, first)
                    if explicitIDs, case .setByHand(let id) = identities[row] {
                        try statement.bind(.integer(id), at: first + Int32(schema.columns.count))
                    }
                }
            }) { statement in
                while try statement.step() {}
            }
            // A row SQLite ignored (`ON CONFLICT IGNORE`, `RAISE(IGNORE)`) is not in the table.
            guard connection.lastChanges == chunk.count else { throw ActiveObjectError.notInserted(table: schema.tableName) }
            if track {
                // Rowids are handed out in order, one more than the largest: the chunk's rows
                // got before+1 … before+n, unless something else inserted meanwhile.
                let last = connection.lastInsertRowID
                guard last == before + Int64(chunk.count) else {
                    throw ActiveObjectError.invalidArgument(
                        "insertAll could not tell the rowids of \(schema.tableName)'s new rows apart (a trigger inserting into the same table?): insert these objects one by one")
                }
                for (position, row) in chunk.enumerated() { result[row] = before + 1 + Int64(position) }
                before = last
            }
            start += chunk.count
        }
    }

    /// The rowid before the next one SQLite will hand out: the largest in the table, or the
    /// table's AUTOINCREMENT high-water mark when that is higher.
    private func nextRowIDBase(on connection: Connection) throws -> Int64 {
        var base: Int64 = 0
        if case .integer(let largest)? = try connection.scalarValue("SELECT max(rowid) FROM \(schema.quotedTable)") { base = largest }
        if case .integer(let sequence)? = try? connection.scalarValue(
            "SELECT seq FROM sqlite_sequence WHERE name = ?", [.text(schema.tableName)]) {
            base = max(base, sequence)
        }
        return base
    }

    private func insertOne(_ row: Int, on connection: Connection) throws -> Int64? {
        if case .setByHand(let id) = identities[row], let insertWithID = sql.insertWithIDSQL {
            try connection.execute(insertWithID, [.integer(id)])
            guard connection.lastChanges == 1 else { throw ActiveObjectError.notInserted(table: schema.tableName) }
            return id
        }
        try connection.execute(sql.insertSQL)
        guard connection.lastChanges == 1 else { throw ActiveObjectError.notInserted(table: schema.tableName) }
        return sql.hasRowID ? connection.lastInsertRowID : nil
    }
}
