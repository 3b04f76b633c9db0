/// One object write, decided on the object's thread and run on the writer: the SQL and its
/// values, and nothing that refers to the object. `Sendable`, so that an async write can run
/// it on the library's writer thread while the object stays on its caller's actor.
struct WritePlan: Sendable {
    enum Operation: Sendable {
        /// INSERT without an id: the row gets a new rowid (when the table has rowids).
        case insert
        /// INSERT or whole-row replacement with a known id (`rowID`).
        case insertWithID
        /// `INSERT … ON CONFLICT DO UPDATE`, returning the rowid when the table has rowids.
        case upsert
        /// UPDATE of some columns of the row `rowID`: it must exist.
        case update
        /// Nothing to write, but the row `rowID` must exist (an explicit `update()`).
        case checkExists
        /// DELETE of the row `rowID`.
        case delete
    }

    let operation: Operation
    let sql: SharedSQL
    let arguments: [DatabaseValue]
    let table: String
    /// The row the write targets (nil for a plain insert).
    let rowID: Int64?
    /// Whether the table has rowids (a `WITHOUT ROWID` table's rows have no `id`).
    let hasRowID: Bool

    /// What the write did.
    struct Outcome: Sendable {
        /// The row's id after the write.
        var rowID: Int64?
        /// Rows changed (for delete: whether the row existed).
        var changes: Int
    }

    /// Runs the write on the writer (`access`).
    /// - Throws: ``ActiveObjectError/recordNotFound(table:id:)`` for an update or existence
    ///   check of a row that is gone; ``ActiveObjectError/notInserted(table:)`` for an INSERT
    ///   (or upsert) that SQLite ignored; ``DatabaseError`` from SQLite.
    func run(on access: Access) throws -> Outcome {
        let connection = access.connection
        switch operation {
        case .insert:
            try connection.execute(sql, arguments)
            try checkInserted(connection)
            return Outcome(rowID: hasRowID ? connection.lastInsertRowID : nil, changes: 1)
        case .insertWithID:
            try connection.execute(sql, arguments)
            try checkInserted(connection)
            return Outcome(rowID: rowID, changes: connection.lastChanges)
        case .upsert:
            let returned = try connection.scalarValue(sql, arguments)
            try checkInserted(connection)
            guard case .integer(let key)? = returned else { return Outcome(rowID: rowID, changes: 1) }
            return Outcome(rowID: key, changes: 1)
        case .update:
            try connection.execute(sql, arguments)
            guard connection.lastChanges > 0 else { throw ActiveObjectError.recordNotFound(table: table, id: rowID) }
            return Outcome(rowID: rowID, changes: connection.lastChanges)
        case .checkExists:
            guard try connection.scalarValue(sql, arguments) != nil else {
                throw ActiveObjectError.recordNotFound(table: table, id: rowID)
            }
            return Outcome(rowID: rowID, changes: 0)
        case .delete:
            try connection.execute(sql, arguments)
            return Outcome(rowID: rowID, changes: connection.lastChanges)
        }
    }

    /// An INSERT (or upsert, whose conflict branch updates the row) that changed no row was
    /// ignored by SQLite: `last_insert_rowid` then still names an earlier row — of this table
    /// or another — which the object must never take.
    private func checkInserted(_ connection: Connection) throws {
        if connection.lastChanges == 0 { throw ActiveObjectError.notInserted(table: table) }
    }
}
