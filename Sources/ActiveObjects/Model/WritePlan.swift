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
        /// UPDATE of some columns of the row without the row's other columns becoming the
        /// object's: a soft delete or a restore (role columns only).
        case markRow
    }

    /// What a write that changed no row means.
    enum NoChange: Sendable {
        /// Nothing: the outcome reports 0 changes (a delete of a row already gone).
        case reported
        /// ``ActiveObjectError/recordNotFound(table:id:)``.
        case recordNotFound
        /// Optimistic locking: ``ActiveObjectError/staleObject(table:key:)`` with this key.
        case stale(key: String)
        /// A soft delete with a version check: when the row still holds the version
        /// (`check` finds it) it was deleted already (0 changes); otherwise it is stale.
        case staleUnlessFound(check: SharedSQL, arguments: [DatabaseValue], key: String)
    }

    let operation: Operation
    let sql: SharedSQL
    let arguments: [DatabaseValue]
    let table: String
    /// The row the write targets (nil for a plain insert).
    let rowID: Int64?
    /// Whether the table has rowids (a `WITHOUT ROWID` table's rows have no `id`).
    let hasRowID: Bool
    /// What no changed row means, when not the operation's usual meaning (an update or an
    /// existence check of a row that is gone: ``ActiveObjectError/recordNotFound(table:id:)``;
    /// a delete: 0 changes reported).
    var noChangeRule: NoChange?
    private var noChange: NoChange {
        if let noChangeRule { return noChangeRule }
        switch operation {
        case .update, .checkExists, .markRow: return .recordNotFound
        case .insert, .insertWithID, .upsert, .delete: return .reported
        }
    }
    /// The values the library wrote in role columns instead of the object's (timestamps, the
    /// next version): the object takes them once the write succeeded.
    var stamps = RoleStamps()
    /// For an upsert: the role columns it returns after the rowid (``ModelSQL/upsertReturnedSlots``).
    var returnedSlots: [Int] = []

    /// What the write did.
    struct Outcome: Sendable {
        /// The row's id after the write.
        var rowID: Int64?
        /// Rows changed (for delete: whether the row existed).
        var changes: Int
        /// The values of ``WritePlan/returnedSlots`` the upsert returned, in that order.
        var returned: [DatabaseValue] = []
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
            guard returnedSlots.isEmpty else { return try upsertReturningRoles(on: connection) }
            let returned = try connection.scalarValue(sql, arguments)
            try checkInserted(connection)
            guard case .integer(let key)? = returned else { return Outcome(rowID: rowID, changes: 1) }
            return Outcome(rowID: key, changes: 1)
        case .update where !returnedSlots.isEmpty:
            // A whole-row update of a model with roles: the row returns its role columns.
            let row = try connection.firstRowValues(sql, arguments)
            guard let row else {
                try reportNoChange(on: connection)
                return Outcome(rowID: rowID, changes: 0)
            }
            return Outcome(rowID: rowID, changes: 1, returned: row)
        case .update, .delete, .markRow:
            try connection.execute(sql, arguments)
            let changes = connection.lastChanges
            if changes == 0 { try reportNoChange(on: connection) }
            return Outcome(rowID: rowID, changes: changes)
        case .checkExists:
            guard try connection.scalarValue(sql, arguments) != nil else {
                try reportNoChange(on: connection)
                return Outcome(rowID: rowID, changes: 0)
            }
            return Outcome(rowID: rowID, changes: 0)
        }
    }

    /// Throws what a write that changed no row means (``noChange``), or returns when it means
    /// nothing.
    private func reportNoChange(on connection: Connection) throws {
        switch noChange {
        case .reported:
            return
        case .recordNotFound:
            throw ActiveObjectError.recordNotFound(table: table, id: rowID)
        case .stale(let key):
            throw ActiveObjectError.staleObject(table: table, key: key)
        case .staleUnlessFound(let check, let arguments, let key):
            if try connection.scalarValue(check, arguments) == nil {
                throw ActiveObjectError.staleObject(table: table, key: key)
            }
        }
    }

    /// An upsert of a model with role columns: the statement returns the rowid (when the
    /// table has one) and the role columns the row holds (a conflict kept its creation date
    /// and counted a version).
    private func upsertReturningRoles(on connection: Connection) throws -> Outcome {
        let row = try connection.firstRowValues(sql, arguments)
        try checkInserted(connection)
        guard let row else { return Outcome(rowID: rowID, changes: 1) }
        let roleValues = Array(row.suffix(returnedSlots.count))
        if hasRowID, case .integer(let key)? = row.first {
            return Outcome(rowID: key, changes: 1, returned: roleValues)
        }
        return Outcome(rowID: rowID, changes: 1, returned: roleValues)
    }

    /// An INSERT (or upsert, whose conflict branch updates the row) that changed no row was
    /// ignored by SQLite: `last_insert_rowid` then still names an earlier row — of this table
    /// or another — which the object must never take.
    private func checkInserted(_ connection: Connection) throws {
        if connection.lastChanges == 0 { throw ActiveObjectError.notInserted(table: table) }
    }
}
