// Async forms of the object writes. They run where the caller runs (`nonisolated(nonsending)`):
// the hooks, the validation and the reading of the object's values happen on the caller's
// actor; only plain values (SQL and `DatabaseValue`s) go to the database's writer thread; the
// object's `id` and change tracking are updated back on the caller's actor when the write is
// done. So a `@MainActor` screen can `try await person.save()` on an object it owns.

extension ActiveObject {
    /// Async form of ``save()``: the SQLite work runs on the database's writer thread.
    ///
    /// ```swift
    /// person.name = "Ann"
    /// try await person.save()
    /// ```
    /// - Throws: as ``save()``.
    nonisolated(nonsending) public func save() async throws { try await writeInBackground(.save) }

    /// Async form of ``insert()``.
    /// - Throws: as ``insert()``.
    nonisolated(nonsending) public func insert() async throws { try await writeInBackground(.insert) }

    /// Async form of ``update()``.
    /// - Throws: as ``update()``.
    nonisolated(nonsending) public func update() async throws { try await writeInBackground(.update) }

    /// Async form of ``upsert()``.
    /// - Throws: as ``upsert()``.
    nonisolated(nonsending) public func upsert() async throws { try await writeInBackground(.upsert) }

    nonisolated(nonsending) private func writeInBackground(_ request: WriteRequest) async throws {
        let (schema, database) = try schemaAndDatabase()
        try runSaveHooks()
        let context = schema.context(in: database)
        if let plan = try planWrite(request, schema: schema, sql: schema.sql(in: database), context: context) {
            let outcome = try await database.perform(.writing) {
                try database.withWriter { try plan.run(on: $0) }
            }
            applyWrite(plan, outcome, schema: schema)
        }
        didSave()
    }

    /// Async form of ``delete()``.
    /// - Returns: true when a row was deleted.
    /// - Throws: as ``delete()``.
    @discardableResult
    nonisolated(nonsending) public func delete() async throws -> Bool {
        let (schema, database) = try schemaAndDatabase()
        guard let plan = try planDelete(schema: schema, database: database) else { return false }
        try willDelete()
        let outcome = try await database.perform(.writing) {
            try database.withWriter { try plan.run(on: $0) }
        }
        applyWrite(plan, outcome, schema: schema)
        didDelete()
        return outcome.changes > 0
    }

    /// Async form of ``reload()``: the row is read on a reader thread, and stored into the
    /// object on the caller's actor.
    /// - Throws: as ``reload()``.
    nonisolated(nonsending) public func reload() async throws {
        let (schema, database) = try schemaAndDatabase()
        let key = try reloadKey(schema: schema, context: schema.context(in: database))
        let sql = schema.sql(in: database)
        let row = try await database.perform(.reading) { () throws -> [DatabaseValue]? in
            try database.withReader { connection in
                try connection.withStatement(sql.findByKeySQL, key) { statement in
                    guard try statement.step() else { return nil }
                    return (0..<statement.columnCount).map { statement.value(at: $0) }
                }
            }
        }
        guard let row else { throw ActiveObjectError.recordNotFound(table: schema.tableName, id: id) }
        let loader = ObjectLoader(canonicalFor: schema, context: schema.context(in: database))
        // Into a scratch object first: a row that does not fit leaves this object untouched.
        try loader.fill(schema.newObject(), row: row)
        try loader.fill(self, row: row)
        preloadedRelations = nil
        didLoad()
    }
}
