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
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` when an object already holds a row,
    ///   appears twice, or was loaded without some of its columns; ``ActiveObjectError/validationFailed(_:)`` and what the hooks throw;
    ///   ``ActiveObjectError/invalidValue(table:column:reason:)``; ``DatabaseError``
    ///   (constraints…); ``ActiveObjectError/misuse(_:)`` inside `db.read`.
    public static func insertAll(_ objects: [Self]) throws {
        try ActiveObject.insertObjects(upcast(objects), of: self)
    }

    /// Async form of ``insertAll(_:)``: the hooks run and the values are read on the caller's
    /// actor; the inserts run on the writer thread; the ids are set back on the caller's actor.
    /// - Throws: as ``insertAll(_:)``.
    nonisolated(nonsending) public static func insertAll(_ objects: [Self]) async throws {
        try await ActiveObject.insertObjects(upcast(objects), of: self)
    }

    /// `objects` as an array of the base class, without visiting them: the compiler's upcast of
    /// an array of a generic subclass casts element by element (a cost per object comparable to
    /// binding a column). Both arrays hold the same strong references in the same layout, and
    /// every element of `[Self]` is an `ActiveObject` (`Self: ActiveObject`), so reinterpreting
    /// the array is sound.
    private static func upcast(_ objects: [Self]) -> [ActiveObject] {
        unsafeBitCast(objects, to: [ActiveObject].self)
    }
}

// The work itself is not generic: a generic static method of a protocol extension is not
// specialized for the caller's model outside this module, and walking `[Self]` through
// witness tables cost more per object than the INSERT itself.
extension ActiveObject {
    /// ``ActiveRecord/insertAll(_:)`` for objects of `model`.
    static func insertObjects(_ objects: [ActiveObject], of model: ActiveObject.Type) throws {
        guard !objects.isEmpty else { return }
        let (schema, database) = try prepareInsert(objects, of: model)
        let context = schema.context(in: database)
        let sql = schema.sql(in: database)
        // A model with timestamps writes rows with the stamps in place of the objects' values
        // (and keeps the objects untouched until the commit); others bind straight from them.
        let stamped = try stampedRows(objects, schema: schema, context: context)
        let identities = rowIdentities(objects, schema: schema, database: database) { index, slot in
            if let stamped { return stamped.rows[index][slot] }
            return try objects[index].withUnsafeObjectPointer { try schema.accessors[slot].encode(from: $0, context: context) }
        }
        let batch = BatchInsert(schema: schema, sql: sql, identities: identities) { statement, row, first in
            if let stamped {
                for (offset, value) in stamped.rows[row].enumerated() { try statement.bind(value, at: first + Int32(offset)) }
            } else {
                try objects[row].bindColumns(to: statement, schema: schema, context: context, first: first)
            }
        }
        let ids: [Int64?] = try database.transaction {
            try database.withAccess(.write) { access in
                let ids = try batch.run(on: access)
                if access.connection.transactionDepth > 1 {
                    // An enclosing transaction may still roll back: remember what to undo.
                    let log = RollbackLog.of(access.connection)
                    for (index, object) in objects.enumerated() {
                        var snapshot = object.rollbackSnapshot(schema: schema)
                        if let stamped {
                            snapshot.valuesBefore = stamped.stamps[index].slots.map { ($0, stamped.before[index][$0]) }
                            snapshot.context = context
                        }
                        log.record(object, snapshot)
                    }
                }
                return ids
            }
        }
        // Only once the COMMIT succeeded (a deferred foreign key fails there, after every
        // INSERT went through): until then the objects stay new.
        if let stamped { takeStamps(objects, stamped.stamps, schema: schema) }
        finishInsert(objects, ids: ids, schema: schema)
    }

    /// For a model with `.createdAt`/`.updatedAt` columns: each object's values (`before`),
    /// its stamps, and the row written (`rows`). Nil for other models.
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)``.
    private static func stampedRows(_ objects: [ActiveObject], schema: ModelSchema, context: ValueContext) throws
        -> (before: [[DatabaseValue]], stamps: [RoleStamps], rows: [[DatabaseValue]])? {
        guard schema.roles.hasTimestamps else { return nil }
        let before = try objects.map { try $0.encodedValues(schema: schema, context: context) }
        let stamps = try zip(objects, before).map { try $0.insertStamps(schema: schema, values: $1, context: context) }
        let rows = zip(before, stamps).map { values, stamps in
            var row = values
            stamps.apply(to: &row)
            return row
        }
        return (before, stamps, rows)
    }

    /// Puts the stamped values into the inserted objects.
    private static func takeStamps(_ objects: [ActiveObject], _ stamps: [RoleStamps], schema: ModelSchema) {
        for (object, stamps) in zip(objects, stamps) {
            object.takeWrittenValues(stamps.values, schema: schema, context: stamps.context, forgettingEdits: false)
        }
    }

    /// The async form of ``insertObjects(_:of:)``.
    nonisolated(nonsending) static func insertObjects(_ objects: [ActiveObject], of model: ActiveObject.Type) async throws {
        guard !objects.isEmpty else { return }
        let (schema, database) = try prepareInsert(objects, of: model)
        let context = schema.context(in: database)
        let sql = schema.sql(in: database)
        let stamped = try stampedRows(objects, schema: schema, context: context)
        let rows = try stamped?.rows ?? objects.map { try $0.encodedValues(schema: schema, context: context) }
        let identities = rowIdentities(objects, schema: schema, database: database) { index, slot in rows[index][slot] }
        // Until the ids are set back, the objects are still new: an async write of one of them
        // meanwhile waits (and a synchronous one is refused) rather than insert it again.
        for object in objects { object.asyncWriteInFlight = true }
        defer {
            for object in objects {
                object.asyncWriteInFlight = false
                AsyncWriteWaiters.resumeAll(for: object)
            }
        }
        let inserted = try await database.perform(.writing) {
            try database.transaction {
                let batch = BatchInsert(schema: schema, sql: sql, identities: identities) { statement, row, first in
                    for (offset, value) in rows[row].enumerated() { try statement.bind(value, at: first + Int32(offset)) }
                }
                return try database.withAccess(.write) { try batch.run(on: $0) }
            }
        }
        if let stamped { takeStamps(objects, stamped.stamps, schema: schema) }
        finishInsert(objects, ids: inserted, schema: schema)
        // Values assigned while the rows were being written stay changes to save.
        for (object, written) in zip(objects, rows) { object.keepChanges(since: written, schema: schema, context: context) }
    }

    /// Checks that the objects are new and distinct, then runs their validation and
    /// `willSave()` hooks.
    private static func prepareInsert(_ objects: [ActiveObject], of model: ActiveObject.Type) throws -> (ModelSchema, Database) {
        let schema = try ModelSchema.of(model)
        if schema.isReadOnly { throw schema.readOnlyError("insertAll(_:)") }
        guard let database = model.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: schema.modelName) }
        if let (first, second) = firstRepetition(in: objects) {
            throw ActiveObjectError.invalidArgument("insertAll: objects \(first) and \(second) are the same object")
        }
        // Whether an auto-numbered key is the rowid alias: looked up once, for the first nil key.
        var keyIsRowIDAlias: Bool?
        // One pass over the objects (each visited once while it is in the cache).
        for index in objects.indices {
            let object = objects[index]
            guard ObjectIdentifier(Swift.type(of: object)) == ObjectIdentifier(model) else {
                throw ActiveObjectError.invalidArgument(
                    "insertAll of \(schema.modelName): object \(index) is a \(Swift.type(of: object)), which has a table of its own (insert it with its own class)")
            }
            try object.checkNoAsyncWrite(schema)
            let state = object.recordState
            guard state == .new || state == .keyless else {
                throw ActiveObjectError.invalidArgument(
                    "insertAll inserts new objects: object \(index) already holds a row of \(schema.tableName) (save() it instead)")
            }
            if object.isPartiallyLoaded {
                throw ActiveObjectError.invalidArgument(
                    "insertAll of \(schema.modelName): object \(index) was loaded without some of its columns, which hold defaults rather than values")
            }
            if let slot = schema.autoNumberedKeySlot {
                try object.checkAutoNumberedKey(slot: slot, schema: schema, isAlias: &keyIsRowIDAlias)
            }
            try object.runSaveHooks()
        }
        return (schema, database)
    }

    /// The positions of the first object that appears twice in `objects`, if any. Sorting the
    /// addresses costs a fraction of hashing each object into a set.
    private static func firstRepetition(in objects: [ActiveObject]) -> (Int, Int)? {
        var addresses = objects.map { UInt(bitPattern: ObjectIdentifier($0)) }
        addresses.sort()
        var repeated: UInt?
        for index in addresses.indices.dropFirst() where addresses[index] == addresses[index - 1] {
            repeated = addresses[index]
            break
        }
        guard let repeated else { return nil }
        let positions = objects.indices.filter { UInt(bitPattern: ObjectIdentifier(objects[$0])) == repeated }
        return (positions[0], positions[1])
    }

    /// Marks the inserted objects persisted with their ids, then runs their `didSave()`.
    private static func finishInsert(_ objects: [ActiveObject], ids: [Int64?], schema: ModelSchema) {
        for index in objects.indices { objects[index].markPersisted(schema: schema, rowID: ids[index]) }
        for object in objects { object.didSave() }
    }
}

extension ActiveObject {
    /// How each object's rowid becomes known (see ``BatchInsert/RowIdentity``): an `id` set by
    /// hand on a rowid model; the key's value when the natural key is the table's rowid alias
    /// (`keyValue(index, slot)`: object `index`'s value of column `slot`); otherwise SQLite
    /// assigns it.
    fileprivate static func rowIdentities(_ objects: [ActiveObject], schema: ModelSchema, database: Database,
                                          keyValue: (Int, Int) throws -> DatabaseValue) -> [BatchInsert.RowIdentity] {
        switch schema.key {
        case .rowID:
            return objects.map { object in object.id.map { .setByHand($0) } ?? .assigned }
        case .columns(let slots):
            guard slots.count == 1, schema.sql(in: database).hasRowID,
                  database.isRowIDAlias(schema.columns[slots[0]].name, of: schema.tableName) else {
                return Array(repeating: .assigned, count: objects.count)
            }
            return objects.indices.map { index in
                // A key that is not an integer fails the INSERT itself (datatype mismatch).
                if case .integer(let key)? = try? keyValue(index, slots[0]) { return .key(key) }
                return .assigned
            }
        }
    }
}
