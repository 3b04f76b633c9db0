extension ActiveRecord where Self: ActiveObject {
    /// Inserts new objects in multi-row `INSERT`s, all in one transaction: every row, or none.
    ///
    /// ```swift
    /// try Person.insertAll(people)          // every object gets its id
    /// ```
    /// Each object is validated and its `willSave()` runs first (any failure writes nothing);
    /// then the rows are inserted in chunks under SQLite's limit on bound variables; then each
    /// object gets its `id` and its `didSave()` runs. On failure every object keeps `id == nil`
    /// (or the id set by hand) and its changes, so a retry works. Inside an enclosing
    /// transaction that later rolls back, the objects become new again.
    ///
    /// Much faster than saving the objects one by one.
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` when an object already holds a row
    ///   or appears twice; ``ActiveObjectError/validationFailed(_:)`` and what the hooks throw;
    ///   ``ActiveObjectError/invalidValue(table:column:reason:)``; ``DatabaseError``
    ///   (constraints…); ``ActiveObjectError/misuse(_:)`` inside `db.read`.
    public static func insertAll(_ objects: [Self]) throws {
        guard !objects.isEmpty else { return }
        let (schema, database) = try prepareInsertAll(objects)
        let context = schema.context(in: database)
        let sql = schema.sql(in: database)
        let batch = BatchInsert(schema: schema, sql: sql, ids: insertedIDs(objects, schema)) { statement, row, first in
            try objects[row].bindColumns(to: statement, schema: schema, context: context, first: first)
        }
        let ids: [Int64?] = try database.transaction {
            let enclosing = database.writer.transactionDepth > 1
            let ids = try database.withWriter { try batch.run(on: $0) }
            if enclosing {
                // An enclosing transaction may still roll back: remember what to undo.
                let log = RollbackLog.of(database.writer)
                for object in objects { log.record(object, object.rollbackSnapshot(schema: schema)) }
            }
            return ids
        }
        // Only once the COMMIT succeeded (a deferred foreign key fails there, after every
        // INSERT went through): until then the objects stay new.
        for (object, id) in zip(objects, ids) { object.markPersisted(schema: schema, rowID: id) }
        for object in objects { object.didSave() }
    }

    /// Async form of ``insertAll(_:)``: the hooks run and the values are read on the caller's
    /// actor; the inserts run on the writer thread; the ids are set back on the caller's actor.
    /// - Throws: as ``insertAll(_:)``.
    nonisolated(nonsending) public static func insertAll(_ objects: [Self]) async throws {
        guard !objects.isEmpty else { return }
        let (schema, database) = try prepareInsertAll(objects)
        let context = schema.context(in: database)
        let sql = schema.sql(in: database)
        let rows = try objects.map { try $0.encodedValues(schema: schema, context: context) }
        let ids = insertedIDs(objects, schema)
        let inserted = try await database.perform(.writing) {
            try database.transaction {
                let batch = BatchInsert(schema: schema, sql: sql, ids: ids) { statement, row, first in
                    for (offset, value) in rows[row].enumerated() { try statement.bind(value, at: first + Int32(offset)) }
                }
                return try database.withWriter { try batch.run(on: $0) }
            }
        }
        for (object, id) in zip(objects, inserted) { object.markPersisted(schema: schema, rowID: id) }
        for object in objects { object.didSave() }
    }

    /// Checks that the objects are new and distinct, then runs their validation and
    /// `willSave()` hooks.
    private static func prepareInsertAll(_ objects: [Self]) throws -> (ModelSchema, Database) {
        let schema = try ModelSchema.of(self)
        guard let database = resolvedDatabase else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        var seen = Set<ObjectIdentifier>()
        for (index, object) in objects.enumerated() {
            guard seen.insert(ObjectIdentifier(object)).inserted else {
                throw ActiveObjectError.invalidArgument("insertAll: object \(index) appears twice in the list")
            }
            guard object.recordState == .new || object.recordState == .keyless else {
                throw ActiveObjectError.invalidArgument(
                    "insertAll inserts new objects: object \(index) already holds a row of \(schema.tableName) (save() it instead)")
            }
        }
        for object in objects { try object.runSaveHooks() }
        return (schema, database)
    }
}

/// The ids an insert writes explicitly: those set by hand on the objects of a rowid model.
private func insertedIDs(_ objects: [some ActiveObject], _ schema: ModelSchema) -> [Int64?] {
    guard case .rowID = schema.key else { return Array(repeating: nil, count: objects.count) }
    return objects.map(\.id)
}
