extension ActiveObject {
    /// The schema and database of this object's class, or the error that prevents using them.
    func schemaAndDatabase() throws -> (ModelSchema, Database) {
        let type = Swift.type(of: self)
        let schema = try ModelSchema.of(type)
        guard let database = type.database else {
            throw ActiveObjectError.noDatabase(model: schema.modelName)
        }
        return (schema, database)
    }

    /// The current value of every column, by slot, as the database would store it.
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)`` (NaN, `UInt64`
    ///   over `Int64.max`, a date text strategies cannot write…).
    func encodedValues(schema: ModelSchema, context: ValueContext) throws -> [DatabaseValue] {
        try withUnsafeObjectPointer { base in
            try schema.accessors.indices.map { slot in
                do {
                    return try schema.accessors[slot].encode(from: base, context: context)
                } catch {
                    throw ActiveObjectError.invalidValue(table: schema.tableName, column: schema.columns[slot].name,
                                                         reason: "\(error)")
                }
            }
        }
    }

    /// Binds every column's current value, in slot order, to parameters 1…n.
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)`` for a value that
    ///   cannot be stored (nothing has run: the caller's statement is reset).
    func bindColumns(to statement: Statement, schema: ModelSchema, context: ValueContext) throws {
        try withUnsafeObjectPointer { base in
            for (slot, accessor) in schema.accessors.enumerated() {
                let value: DatabaseValue
                do {
                    value = try accessor.encode(from: base, context: context)
                } catch {
                    throw ActiveObjectError.invalidValue(table: schema.tableName, column: schema.columns[slot].name,
                                                         reason: "\(error)")
                }
                try statement.bind(value, at: Int32(slot + 1))
            }
        }
    }

    /// Slots whose value differs from what was last loaded or saved. For an object that does
    /// not hold a row (never saved, or deleted), the comparison is with the class's defaults.
    func changedSlots(_ values: [DatabaseValue], schema: ModelSchema, context: ValueContext) -> [Int] {
        guard isPersisted else {
            guard let defaults = try? schema.prototype.encodedValues(schema: schema, context: context) else {
                return Array(values.indices)
            }
            return values.indices.filter { !DatabaseValue.sameStoredValue(values[$0], defaults[$0]) }
        }
        return withUnsafeObjectPointer { base in
            values.indices.filter { schema.accessors[$0].isChanged(in: base, current: values[$0], context: context) }
        }
    }

    /// Marks the current values as what the database holds.
    func markPersisted(schema: ModelSchema) {
        withUnsafeObjectPointer { base in
            for accessor in schema.accessors { accessor.setState(.clean, in: base) }
        }
        isPersisted = true
    }

    /// True when a property differs from what was last loaded or saved (for a new object:
    /// from the class's defaults).
    public var hasChanges: Bool { !changedColumns.isEmpty }

    /// The column names whose values differ from what was last loaded or saved (for a new
    /// object: from the class's defaults), in declaration order.
    public var changedColumns: [String] {
        guard let (schema, database) = try? schemaAndDatabase() else {
            // Without a database, compare in the default date format.
            guard let schema = try? ModelSchema.of(Swift.type(of: self)) else { return [] }
            let context = ValueContext(dateStrategy: schema.dateStrategy ?? .iso8601Text)
            guard let values = try? encodedValues(schema: schema, context: context) else { return [] }
            return changedSlots(values, schema: schema, context: context).map { schema.columns[$0].name }
        }
        let context = schema.context(in: database)
        guard let values = try? encodedValues(schema: schema, context: context) else {
            return schema.columns.map(\.name)
        }
        return changedSlots(values, schema: schema, context: context).map { schema.columns[$0].name }
    }

    /// Inside ``Database/transaction(_:)``, records this object's state (`id`, whether it
    /// holds its row, its pending changes) so that a rollback of the transaction (or savepoint)
    /// restores it, and a retry writes the same changes again.
    private func rememberStateForRollback(in connection: Connection, schema: ModelSchema) {
        guard connection.transactionDepth > 0 else { return }
        if id == nil && !isPersisted {
            connection.rollbackActions.append(.forgetInsert(WeakObject(object: self)))
            return
        }
        let (id, persisted, relations) = (self.id, isPersisted, preloadedRelations)
        // A new object is inserted whole, so only a loaded one has pending changes to keep.
        let states = persisted
            ? withUnsafeObjectPointer { base in schema.columns.map { $0.accessor.state(in: base) } }
            : nil
        connection.rollbackActions.append(.run { [self] in
            self.id = id
            self.isPersisted = persisted
            self.preloadedRelations = relations
            if let states {
                withUnsafeObjectPointer { base in
                    for (column, state) in zip(schema.columns, states) { column.accessor.setState(state, in: base) }
                }
            }
        })
    }

    // MARK: Writing

    /// Inserts the object when it has no `id`, otherwise updates the columns that changed
    /// (and runs no SQL at all when nothing changed). An object with an `id` that does not
    /// hold its row — the id was set by hand, or the object was deleted — is written whole:
    /// inserted with that id, or replacing every column of the row with that id.
    ///
    /// Runs `validate()`, `willSave()`, the write, then `didSave()`. If anything throws,
    /// nothing is written and the object keeps its state (`id`, changes), so a retry works.
    ///
    /// ```swift
    /// let p = Person(); p.name = "Joe"
    /// try p.save()          // INSERT
    /// p.age = 31
    /// try p.save()          // UPDATE "person" SET "age" = ? WHERE "id" = ?
    /// ```
    /// - Throws: ``ActiveObjectError/validationFailed(_:)``, ``ActiveObjectError/noDatabase(model:)``,
    ///   ``ActiveObjectError/invalidValue(table:column:reason:)``, ``ActiveObjectError/recordNotFound(table:id:)``
    ///   (the row was deleted meanwhile), or ``DatabaseError`` (constraints, busy…).
    public func save() throws {
        if id == nil {
            try write(.insert)
        } else if !isPersisted {
            // An id set by hand, or a deleted object: the object stands for the whole row.
            try write(.replaceRow)
        } else {
            try write(.save)
        }
    }

    /// Inserts the object as a new row (with its `id` when set), even if it was saved before.
    /// - Throws: as ``save()``; a duplicate `id` is SQLite's `constraint` error.
    public func insert() throws { try write(.insert) }

    /// Updates the row with this object's `id`: the changed columns only.
    /// - Throws: ``ActiveObjectError/recordNotFound(table:id:)`` when the object has no `id`
    ///   or its row no longer exists; otherwise as ``save()``.
    public func update() throws { try write(.update) }

    /// Inserts the row, or updates it when it conflicts with an existing row on the primary
    /// key or a unique column: `INSERT … ON CONFLICT DO UPDATE` (never `REPLACE`, which
    /// would delete the old row and cascade). The object's `id` is set to the row's.
    public func upsert() throws { try write(.upsert) }

    enum WriteKind { case save, insert, update, upsert, replaceRow }

    private func write(_ kind: WriteKind) throws {
        let (schema, database) = try schemaAndDatabase()
        do {
            try validate()
        } catch let error as ValidationError {
            throw ActiveObjectError.validationFailed(error)
        }
        try willSave()
        let context = schema.context(in: database)
        if kind == .insert && id == nil {
            // The most common write: bind the properties straight into the cached INSERT.
            try database.withConnection { connection in
                try connection.withStatement(schema.insertSQL, binding: { statement in
                    try bindColumns(to: statement, schema: schema, context: context)
                }) { statement in
                    while try statement.step() {}
                }
                id = connection.lastInsertRowID
                // A rollback of the enclosing transaction makes the object new again.
                if connection.transactionDepth > 0 {
                    connection.rollbackActions.append(.forgetInsert(WeakObject(object: self)))
                }
            }
            markPersisted(schema: schema)
            didSave()
            return
        }
        let values = try encodedValues(schema: schema, context: context)
        let written: Bool = try database.withConnection { connection in
            rememberStateForRollback(in: connection, schema: schema)
            switch kind {
            case .insert:
                if let id {
                    try connection.execute(schema.insertWithIDSQL, [.integer(id)] + values)
                } else {
                    try connection.execute(schema.insertSQL, values)
                    id = connection.lastInsertRowID
                }
                return true
            case .replaceRow:
                // Insert with this id, or update every column of the row that has it.
                try connection.execute(schema.saveWholeRowSQL, [.integer(id!)] + values)
                return true
            case .upsert:
                let sql = id == nil ? schema.upsertSQL : schema.upsertWithIDSQL
                let arguments = id.map { [.integer($0)] + values } ?? values
                let returned = try connection.scalarValue(sql, arguments)
                if case .integer(let rowID)? = returned { id = rowID }
                return true
            case .save, .update:
                guard let id else { throw ActiveObjectError.recordNotFound(table: schema.tableName, id: nil) }
                // An object that does not hold a row (an id set by hand, a deleted row) stands
                // for the whole row: write every column.
                let slots = isPersisted
                    ? changedSlots(values, schema: schema, context: context)
                    : Array(values.indices)
                if slots.isEmpty {
                    if kind == .save { return false }
                    // An explicit update() still reports a row that is gone.
                    guard try connection.scalarValue(schema.existsByIDSQL, [.integer(id)]) != nil else {
                        throw ActiveObjectError.recordNotFound(table: schema.tableName, id: id)
                    }
                    return false
                }
                try connection.execute(schema.updateSQL(slots: slots), slots.map { values[$0] } + [.integer(id)])
                guard connection.changes > 0 else {
                    throw ActiveObjectError.recordNotFound(table: schema.tableName, id: id)
                }
                return true
            }
        }
        markPersisted(schema: schema)
        if written || kind == .save { didSave() }
    }

    /// Deletes the object's row. Runs `willDelete()` first (throwing cancels) and
    /// `didDelete()` after. The object keeps its values and its `id`: `save()` puts the row
    /// back with the same id, while `update()` throws ``ActiveObjectError/recordNotFound(table:id:)``.
    ///
    /// - Returns: true when a row was deleted; false when the object had no `id` or its row
    ///   was already gone.
    @discardableResult
    public func delete() throws -> Bool {
        guard let id else { return false }
        let (schema, database) = try schemaAndDatabase()
        try willDelete()
        let deleted = try database.withConnection { connection in
            rememberStateForRollback(in: connection, schema: schema)
            try connection.execute(schema.deleteByIDSQL, [.integer(id)])
            return connection.changes > 0
        }
        isPersisted = false
        preloadedRelations = nil
        didDelete()
        return deleted
    }

    /// Re-reads the object's row, replacing every property (and discarding unsaved changes).
    /// - Throws: ``ActiveObjectError/recordNotFound(table:id:)`` when the object has no `id`
    ///   or its row is gone; ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)``.
    public func reload() throws {
        let (schema, database) = try schemaAndDatabase()
        guard let id else { throw ActiveObjectError.recordNotFound(table: schema.tableName, id: nil) }
        let context = schema.context(in: database)
        let found = try database.withConnection { connection in
            try connection.withStatement(schema.findByIDSQL, [.integer(id)]) { statement -> Bool in
                guard try statement.step() else { return false }
                // Read into a scratch object first, so that a row that fails to decode leaves
                // this object untouched; then take its values.
                let loader = ObjectLoader(canonicalFor: schema, context: context)
                try loader.fill(schema.modelType.init(), from: statement)
                try loader.fill(self, from: statement)
                return true
            }
        }
        guard found else { throw ActiveObjectError.recordNotFound(table: schema.tableName, id: id) }
        markPersisted(schema: schema)
        preloadedRelations = nil
    }
}

extension ActiveObject: InsertUndoable {
    /// After a rollback of the transaction that inserted it: the object is new again.
    func forgetInsert() {
        id = nil
        isPersisted = false
        preloadedRelations = nil
    }
}
