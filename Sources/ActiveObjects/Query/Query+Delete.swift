// Query-level deletes: for a model with a `@Column(role: .deletedAt)`, `delete()` is a soft
// delete — one UPDATE that sets the column (and stamps `.updatedAt`, counts `.lockVersion`) —
// and `delete(permanently: true)` is the DELETE; for other models both are the DELETE.

extension Query {
    /// Deletes the matching rows (without running `willDelete`/`didDelete`) and returns how
    /// many were deleted. Runs on the writer.
    ///
    /// For a model with a `@Column(role: .deletedAt)` this is a **soft delete**: one `UPDATE`
    /// sets `deletedAt` to the current date in the matching rows not deleted yet (and, in the
    /// same statement, `.updatedAt` to that date — unless inside
    /// ``ActiveObject/withoutTimestamps(_:)-(()->R)`` — and `.lockVersion` one higher), which
    /// every query then leaves out; it returns the number of rows it marked. Rows already
    /// soft-deleted keep their date: after ``onlyDeleted()`` it marks nothing and returns 0.
    /// To remove the rows from the table, use ``delete(permanently:)-8orla``.
    ///
    /// ```swift
    /// try Post.where(\.$title == "").delete()        // soft: sets deletedAt
    /// ```
    /// - Throws: ``ActiveObjectError/unknownColumn(table:column:)`` and the other errors of
    ///   building the query (before any SQL runs); ``DatabaseError`` (constraints…);
    ///   ``ActiveObjectError/misuse(_:)`` inside `db.read`; for a soft delete,
    ///   ``ActiveObjectError/invalidValue(table:column:reason:)`` when a row's `.lockVersion`
    ///   is the largest its property can hold (an `Int8` at 127: nothing is written).
    @discardableResult
    public func delete() throws -> Int {
        try delete(permanently: false)
    }

    /// Deletes the matching rows — for real when `permanently` is true, even for a model with a
    /// `@Column(role: .deletedAt)` — and returns how many. With `permanently: false` this is
    /// ``delete()-70fu1`` (soft for such a model).
    ///
    /// A permanent delete removes exactly the rows the query reads, following its soft-delete
    /// scope like every terminal: the rows not soft-deleted by default, every row after
    /// ``withDeleted()``, the soft-deleted ones after ``onlyDeleted()``.
    ///
    /// ```swift
    /// try Post.all.onlyDeleted().delete(permanently: true)           // empties the bin
    /// try Post.where(\.$authorId == 7).withDeleted().delete(permanently: true)   // all of them
    /// ```
    /// No hooks run. Runs on the writer.
    /// - Throws: as ``delete()-70fu1``.
    @discardableResult
    public func delete(permanently: Bool) throws -> Int {
        try deleteStatement(permanently: permanently)?.run() ?? 0
    }

    /// Async form of ``delete()``: runs on the writer thread. (The date and the
    /// `withoutTimestamps` scope are read on the caller's task.)
    /// - Throws: as ``delete()``.
    @discardableResult
    public func delete() async throws -> Int {
        try await delete(permanently: false)
    }

    /// Async form of ``delete(permanently:)``: runs on the writer thread.
    /// - Throws: as ``delete()-70fu1``.
    @discardableResult
    public func delete(permanently: Bool) async throws -> Int {
        guard let statement = try deleteStatement(permanently: permanently) else { return 0 }
        return try await statement.database.perform(.writing) { try statement.run() }
    }

    /// The statement of a query-level delete (nil: nothing to do), built on the caller's thread
    /// or task, where the `withoutTimestamps` scope is.
    private func deleteStatement(permanently: Bool) throws -> WriteStatement? {
        let schema = try ModelSchema.of(Model.self)
        if schema.isReadOnly { throw schema.readOnlyError("delete()") }
        guard !permanently, let deletedAt = schema.roles.deletedAt else {
            let compiled = try compile()
            let (sql, arguments) = Self.rowsStatement("DELETE FROM \(schema.quotedTable)", compiled)
            return WriteStatement(sql: sql, arguments: arguments, database: compiled.database)
        }
        // A soft delete marks the matching rows not deleted yet.
        let compiled = try scoped(softDeleteScope == .onlyDeleted ? .onlyDeleted : .visible).compile()
        if softDeleteScope == .onlyDeleted { return nil }
        let column = schema.columns[deletedAt]
        let now = try Timestamps.now(in: compiled.context, table: schema.tableName, column: column.name).stored
        return Self.updateStatement(setting: ["\(column.quotedName) = ?"], [now], assigned: [deletedAt], now: now, compiled)
    }

    /// A query-level UPDATE of the query's rows: the caller's SET terms and their arguments
    /// (for the columns at `assigned`), then those of the column roles (see
    /// ``roleAssignments(_:assigned:now:)``), with the check that a narrow `.lockVersion`
    /// property can hold the versions it writes.
    static func updateStatement(setting terms: [String], _ arguments: [DatabaseValue], assigned: Set<Int>,
                                now: DatabaseValue?, _ compiled: Compiled) -> WriteStatement {
        let schema = compiled.schema
        let (roleTerms, roleArguments) = roleAssignments(schema, assigned: assigned, now: now)
        let set = (terms + roleTerms).joined(separator: ", ")
        let (sql, filterArguments) = rowsStatement("UPDATE \(schema.quotedTable) SET \(set)", compiled)
        var statement = WriteStatement(sql: sql, arguments: arguments + roleArguments + filterArguments,
                                       database: compiled.database)
        if let slot = schema.roles.lockVersion, !assigned.contains(slot), let largest = largestVersion(schema, slot: slot) {
            // `"lockVersion" + 1` past what the property holds would leave rows no object can
            // read: refused before anything is written, as a save refuses it.
            let column = schema.columns[slot]
            let (rows, rowArguments) = rowsStatement("SELECT \(column.quotedName) AS \"_v\" FROM \(schema.quotedTable)", compiled)
            statement.check = (sql: "SELECT EXISTS (SELECT 1 FROM (\(rows)) WHERE \"_v\" >= ?)",
                               arguments: rowArguments + [.integer(largest)],
                               error: .invalidValue(table: schema.tableName, column: column.name,
                                                    reason: "a lock version is \(largest), the largest its property \(column.propertyName) can hold"))
        }
        return statement
    }

    /// The largest version the `.lockVersion` property at `slot` holds, when it is narrower
    /// than 64 bits (nil for `Int`, `Int64`).
    private static func largestVersion(_ schema: ModelSchema, slot: Int) -> Int64? {
        let accessor = schema.accessors[slot]
        let context = schema.keyContext
        for bits: Int64 in [8, 16, 32] where !accessor.canHold(.integer(1 << (bits - 1)), context: context) {
            return (1 << (bits - 1)) - 1
        }
        return nil
    }

    /// `head` (a `DELETE FROM t` or `UPDATE t SET …`) applied to the query's rows: with its
    /// WHERE clause, or — with an ORDER BY or a LIMIT, which DELETE and UPDATE do not take, or
    /// a search — for the rows the query selects, named by their key. The arguments are the filters'
    /// (those of `head` go before them).
    static func rowsStatement(_ head: String, _ compiled: Compiled) -> (String, [DatabaseValue]) {
        if compiled.limitClause.isEmpty && compiled.orderClause.isEmpty && !compiled.searches {
            return (head + compiled.whereClause, compiled.arguments)
        }
        // Rows named by their key (a row value for composite keys, which works without rowid).
        let schema = compiled.schema
        let keys = schema.keySlots.isEmpty
            ? schema.quotedPrimaryKey
            : "(" + schema.keySlots.map { schema.columns[$0].quotedName }.joined(separator: ", ") + ")"
        let list = keys.hasPrefix("(") ? String(keys.dropFirst().dropLast()) : keys
        return ("\(head) WHERE \(keys) IN (SELECT \(list) FROM \(compiled.source)\(compiled.tail))",
                compiled.tailArguments)
    }

    /// The SET terms the column roles add to a query-level UPDATE, and their arguments:
    /// `.updatedAt` set to `now` (unless inside `withoutTimestamps`, or `now` is nil), and
    /// `.lockVersion` one higher — except for the columns in `assigned`, which the caller sets.
    static func roleAssignments(_ schema: ModelSchema, assigned: Set<Int>, now: DatabaseValue?)
        -> (terms: [String], arguments: [DatabaseValue]) {
        var terms: [String] = []
        var arguments: [DatabaseValue] = []
        if let slot = schema.roles.updatedAt, !assigned.contains(slot), let now, !Timestamps.areSuspended {
            terms.append("\(schema.columns[slot].quotedName) = ?")
            arguments.append(now)
        }
        if let slot = schema.roles.lockVersion, !assigned.contains(slot) {
            let column = schema.columns[slot].quotedName
            terms.append("\(column) = \(column) + 1")
        }
        return (terms, arguments)
    }

    /// Runs a write statement on the writer and returns the number of rows it changed.
    static func runWrite(_ sql: String, _ arguments: [DatabaseValue], on database: Database) throws -> Int {
        try WriteStatement(sql: sql, arguments: arguments, database: database).run()
    }
}

/// A query-level write, built where the call is made and run on the writer (now or on the
/// writer's thread): its SQL and arguments, and a check to run first, in the same access.
struct WriteStatement: Sendable {
    let sql: String
    let arguments: [DatabaseValue]
    let database: Database
    /// A `SELECT EXISTS (…)` that must be false, else `error` is thrown and nothing written.
    var check: (sql: String, arguments: [DatabaseValue], error: ActiveObjectError)?

    init(sql: String, arguments: [DatabaseValue], database: Database) {
        (self.sql, self.arguments, self.database) = (sql, arguments, database)
    }

    /// Runs on the writer; returns the number of rows changed.
    /// - Throws: the check's error; ``DatabaseError``; ``ActiveObjectError/misuse(_:)`` inside `db.read`.
    func run() throws -> Int {
        try database.withAccess(.write) { access in
            if let check, try access.connection.scalarValue(check.sql, check.arguments) == .integer(1) {
                throw check.error
            }
            try access.connection.execute(sql, arguments)
            return access.connection.lastChanges
        }
    }
}
