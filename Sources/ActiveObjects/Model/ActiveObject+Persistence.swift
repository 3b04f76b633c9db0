extension ActiveObject {
    /// The schema and database of this object's class, or the error that prevents using them.
    func schemaAndDatabase() throws -> (ModelSchema, Database) {
        let type = Swift.type(of: self)
        let schema = try ModelSchema.of(type)
        guard let database = type.resolvedDatabase else {
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

    /// Binds every column's current value, in slot order, to parameters `first`…`first + n - 1`.
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)`` for a value that
    ///   cannot be stored (nothing has run: the caller's statement is reset).
    func bindColumns(to statement: Statement, schema: ModelSchema, context: ValueContext, first: Int32 = 1) throws {
        // No closure: `self` is alive for the whole call (it is the receiver), and the loop
        // stays free of captured state and reference counting.
        let base = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        // The schema's steps are plain values: no retain of an accessor per column.
        let steps = schema.canonicalSteps
        for slot in steps.indices {
            do {
                let index = first + Int32(slot)
                if try statement.bindNative(steps[slot].nativeType, at: base + steps[slot].valueOffset, to: index) { continue }
                try statement.bind(try schema.accessors[slot].encode(from: base, context: context), at: index)
            } catch let error as DatabaseError {
                throw error
            } catch {
                throw ActiveObjectError.invalidValue(table: schema.tableName, column: schema.columns[slot].name,
                                                     reason: "\(error)")
            }
        }
    }

    /// True when the object holds the row it was loaded from or saved to (for rowid models,
    /// with its `id` unchanged): only then are its changes relative to that row.
    func holdsItsRow(_ schema: ModelSchema) -> Bool {
        guard recordState == .persisted else { return false }
        if case .rowID = schema.key { return id == persistedRowID && id != nil }
        return true
    }

    /// Slots whose value differs from what was last loaded or saved. For an object that does
    /// not hold its row (new, deleted, or with an `id` set by hand), the comparison is with
    /// the class's defaults.
    func changedSlots(_ values: [DatabaseValue], schema: ModelSchema, context: ValueContext) -> [Int] {
        guard holdsItsRow(schema) || recordState == .keyless else {
            guard let defaults = try? schema.defaultValues(context: context) else {
                return Array(values.indices)
            }
            return values.indices.filter { !DatabaseValue.sameStoredValue(values[$0], defaults[$0]) }
        }
        guard let edits else { return [] }
        return withUnsafeObjectPointer { base in
            values.indices.filter {
                schema.accessors[$0].isChanged(in: base, edits: edits, current: values[$0], context: context)
            }
        }
    }

    /// Refuses a synchronous write while an async write of the object is in flight: both
    /// would be planned from the same state (two INSERTs of one new object).
    /// - Throws: ``ActiveObjectError/misuse(_:)``.
    @inline(__always)
    func checkNoAsyncWrite(_ schema: ModelSchema) throws {
        guard asyncWriteInFlight else { return }
        throw ActiveObjectError.misuse(
            "an async write of this \(schema.modelName) is still running: await it before writing the object again")
    }

    /// Marks the current values as what the row `rowID` holds (a nil auto-numbered key takes
    /// the number SQLite gave the row), notifying the observers of `id` and of that key when
    /// they change.
    func markPersisted(schema: ModelSchema, rowID: Int64?) {
        let numberedKey = withUnsafeObjectPointer { base -> ColumnAccessor? in
            guard let slot = schema.autoNumberedKeySlot, rowID != nil, schema.accessors[slot].isNull(in: base) else {
                return nil
            }
            return schema.accessors[slot]
        }
        // The row state changes what hasChanges compares with (a new object: the defaults).
        notifyingObservers(ofOffsets: numberedKey.map { [$0.valueOffset] } ?? [], id: self.rowID != rowID,
                           changes: isObserved && recordState != .persisted) {
            if let numberedKey, let rowID {
                withUnsafeObjectPointer { numberedKey.setInteger(rowID, in: $0) }
            }
            markLoaded(rowID: rowID, state: .persisted)
        }
    }

    /// True when a property differs from what was last loaded or saved (for a new object:
    /// from the class's defaults). Observed (see <doc:SwiftUIAndObservation>): a view that
    /// reads it follows every edit, save, reload and rollback.
    public var hasChanges: Bool { !changedColumns.isEmpty }

    /// The column names whose values differ from what was last loaded or saved (for a new
    /// object: from the class's defaults), in declaration order.
    public var changedColumns: [String] {
        guard let schema = try? ModelSchema.of(Swift.type(of: self)) else { return [] }
        observeReadOfWholeRow(schema: schema)
        // Without a database, compare in the model's (or the default) date format.
        let context = Swift.type(of: self).resolvedDatabase.map { schema.context(in: $0) }
            ?? ValueContext(dateStrategy: schema.dateStrategy ?? .iso8601Text)
        guard let values = try? encodedValues(schema: schema, context: context) else {
            return schema.columns.map(\.name)
        }
        return changedSlots(values, schema: schema, context: context).map { schema.columns[$0].name }
    }

    // MARK: Writing

    /// Saves the object: what it does follows from where the object stands.
    ///
    /// - A new object (`id == nil`) is inserted; `id` is set.
    /// - A loaded or saved object updates the columns that changed, and runs no SQL at all
    ///   when nothing changed.
    /// - An object whose `id` was set by hand (or changed on a loaded object) stands for the
    ///   row with that `id`: every column is written there (the row is inserted, or all its
    ///   columns replaced).
    /// - A deleted object is inserted again with its `id` (or key); if another row holds it
    ///   by now, SQLite's constraint error — that row is never overwritten.
    /// - An object loaded without its primary key column (`fetch(sql:)` without the key)
    ///   cannot name a row, and one loaded without some columns cannot write its whole row:
    ///   ``ActiveObjectError/misuse(_:)``.
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
    ///   (the row was deleted meanwhile), ``ActiveObjectError/misuse(_:)`` (keyless or partly
    ///   loaded object, or inside `db.read`), or ``DatabaseError`` (constraints, busy…); whatever `validate()`
    ///   or `willSave()` throw.
    public func save() throws { try write(.save) }

    /// Inserts the object as a new row (with its `id` when set), even if it was saved before.
    /// - Throws: as ``save()-7ee50``; a duplicate `id` is SQLite's `constraint` error.
    public func insert() throws { try write(.insert) }

    /// Updates the row with this object's `id`: the changed columns only (every column when
    /// the object does not hold that row, e.g. an `id` set by hand). Runs the hooks, and
    /// `didSave()` also when nothing changed.
    /// - Throws: ``ActiveObjectError/recordNotFound(table:id:)`` when the object has no `id`
    ///   or its row no longer exists; otherwise as ``save()-7ee50``.
    public func update() throws { try write(.update) }

    /// Inserts the row, or updates it when it conflicts with an existing row on the primary
    /// key or a unique column: `INSERT … ON CONFLICT DO UPDATE` (never `REPLACE`, which
    /// would delete the old row and cascade). The object's `id` is set to the row's.
    /// - Throws: as ``save()-7ee50``.
    public func upsert() throws { try write(.upsert) }

    enum WriteRequest { case save, insert, update, upsert }

    /// `validate()` then `willSave()`: a failure writes nothing.
    func runSaveHooks() throws {
        do {
            try validate()
        } catch let error as ValidationError {
            throw ActiveObjectError.validationFailed(error)
        }
        try willSave()
    }

    /// Decides what a write request does, from the object's state: nil when there is nothing
    /// to write. Reads the object's values; does not touch the database. For a model with
    /// role columns (``ColumnRole``), the plan carries the stamps it writes instead of the
    /// object's values, and an update checks the version the object was loaded with.
    func planWrite(_ request: WriteRequest, schema: ModelSchema, sql: ModelSQL,
                   context: ValueContext) throws -> WritePlan? {
        let table = schema.tableName
        var values = try encodedValues(schema: schema, context: context)
        let hasRoles = !schema.roles.isEmpty
        func plan(_ operation: WritePlan.Operation, _ statement: SharedSQL, _ arguments: [DatabaseValue],
                  rowID: Int64? = nil) -> WritePlan {
            WritePlan(operation: operation, sql: statement, arguments: arguments, table: table, rowID: rowID ?? id,
                      hasRowID: sql.hasRowID)
        }
        // Inside `withoutTimestamps`, an upsert that meets a row writes the creation date the
        // object holds (an import), not the row's.
        let upserts = sql.importingUpserts != nil && Timestamps.areSuspended ? sql.importingUpserts : nil
        /// An INSERT (`withID`: the rowid first), stamped. An upsert (or a whole-row save) of a
        /// model with roles returns the role columns the row holds.
        func inserting(_ operation: WritePlan.Operation, _ statement: SharedSQL, withID: Int64? = nil,
                       wholeRow: Bool = false) throws -> WritePlan {
            let stamps = hasRoles ? try insertStamps(schema: schema, values: values, context: context) : RoleStamps()
            stamps.apply(to: &values)
            let returns = operation == .upsert || (hasRoles && wholeRow)
            var planned = plan(returns && hasRoles ? .upsert : operation, statement,
                               (withID.map { [DatabaseValue.integer($0)] } ?? []) + values, rowID: withID)
            planned.stamps = stamps
            if returns { planned.returnedSlots = sql.upsertReturnedSlots }
            return planned
        }
        /// An UPDATE of `slots` (not empty) of the row `key` names, stamped and version-checked.
        /// `wholeRow`: the object does not hold its row (an `id` set by hand) — the row keeps
        /// its creation date and counts one more version, which the object takes back.
        func updating(_ slots: [Int], key: [DatabaseValue], wholeRow: Bool = false) throws -> WritePlan {
            guard hasRoles else {
                return plan(.update, sql.updateSQL(slots: slots), slots.map { values[$0] } + key,
                            rowID: rowIDAfterUpdate(slots: slots, values: values, schema: schema, sql: sql))
            }
            if wholeRow {
                var stamps = RoleStamps(context: context)
                if let slot = schema.roles.updatedAt, !Timestamps.areSuspended {
                    stamps.set(slot, try Timestamps.now(in: context, table: table, column: schema.columns[slot].name).stored)
                }
                stamps.apply(to: &values)
                let roles = schema.roles
                let written = slots.filter { $0 != roles.lockVersion && ($0 != roles.createdAt || Timestamps.areSuspended) }
                let returned = [roles.createdAt, roles.lockVersion].compactMap { $0 }
                var planned = plan(.update, sql.wholeRowUpdateSQL(slots: written, incrementing: roles.lockVersion, returning: returned),
                                   written.map { values[$0] } + key,
                                   rowID: rowIDAfterUpdate(slots: written, values: values, schema: schema, sql: sql))
                planned.stamps = stamps
                planned.returnedSlots = returned
                return planned
            }
            let (stamps, expected) = try updateStamps(schema: schema, changed: slots, values: values, context: context)
            stamps.apply(to: &values)
            let written = slots + stamps.slots.filter { !slots.contains($0) }
            var planned = plan(.update, sql.updateSQL(slots: written, checkingVersion: expected != nil),
                               written.map { values[$0] } + key + (expected.map { [$0] } ?? []),
                               rowID: rowIDAfterUpdate(slots: written, values: values, schema: schema, sql: sql))
            planned.stamps = stamps
            if expected != nil { planned.noChangeRule = .stale(key: keyDescription(schema: schema, key: key)) }
            return planned
        }
        let isRowIDModel: Bool
        if case .rowID = schema.key { isRowIDModel = true } else { isRowIDModel = false }
        switch request {
        case .insert:
            if isRowIDModel, let id, let insertWithID = sql.insertWithIDSQL {
                return try inserting(.insertWithID, insertWithID, withID: id)
            }
            return try inserting(.insert, sql.insertSQL)
        case .upsert:
            if isRowIDModel, let id, let upsertWithID = upserts?.upsertWithID ?? sql.upsertWithIDSQL {
                return try inserting(.upsert, upsertWithID, withID: id)
            }
            return try inserting(.upsert, upserts?.upsert ?? sql.upsertSQL)
        case .save:
            if holdsItsRow(schema) {
                let slots = changedSlots(values, schema: schema, context: context)
                if slots.isEmpty { return nil }
                let key = try rowKeyArguments(schema: schema, context: context) ?? []
                return try updating(slots, key: key)
            }
            if isRowIDModel, let insertWithID = sql.insertWithIDSQL,
               let saveWholeRow = upserts?.saveWholeRow ?? sql.saveWholeRowSQL {
                guard let id else { return try inserting(.insert, sql.insertSQL) }
                if recordState == .deleted {
                    // A deleted object puts its row back with the same id. If another row
                    // took that id meanwhile (SQLite reuses the largest rowid), the INSERT
                    // fails with a constraint error: that row is never overwritten.
                    return try inserting(.insertWithID, insertWithID, withID: id)
                }
                // An id set by hand: the object stands for the whole row with that id.
                return try inserting(.insertWithID, saveWholeRow, withID: id, wholeRow: true)
            }
            // A natural key: a new or deleted object is inserted (a key another row holds is
            // a constraint error).
            return try inserting(.insert, sql.insertSQL)
        case .update:
            guard let key = try rowKeyArguments(schema: schema, context: context) else {
                throw ActiveObjectError.recordNotFound(table: table, id: nil)
            }
            let holdsRow = holdsItsRow(schema)
            let slots = holdsRow ? changedSlots(values, schema: schema, context: context) : Array(values.indices)
            if slots.isEmpty {
                // An explicit update() still reports a row that is gone (or, with optimistic
                // locking, a row that changed since).
                if let locked = sql.locked, let expected = try versionLoaded(schema: schema, values: values, context: context) {
                    var planned = plan(.checkExists, locked.existsSQL, key + [expected])
                    planned.noChangeRule = .stale(key: keyDescription(schema: schema, key: key))
                    return planned
                }
                return plan(.checkExists, sql.existsSQL, key)
            }
            return try updating(slots, key: key, wholeRow: !holdsRow)
        }
    }

    /// The rowid of the row after an UPDATE of `slots`, when the update moves it: a new value
    /// for a natural key that is SQLite's rowid alias (an `INTEGER` primary key numbered by
    /// hand) is the row's new rowid. Nil otherwise (the rowid stays `id`).
    private func rowIDAfterUpdate(slots: [Int], values: [DatabaseValue], schema: ModelSchema, sql: ModelSQL) -> Int64? {
        guard sql.hasRowID, case .columns(let keySlots) = schema.key, keySlots.count == 1, slots.contains(keySlots[0]),
              case .integer(let newRowID) = values[keySlots[0]],
              let database = Swift.type(of: self).resolvedDatabase,
              database.isRowIDAlias(schema.columns[keySlots[0]].name, of: schema.tableName) else { return nil }
        return newRowID
    }

    /// Refuses the writes an object's state cannot support, before anything runs: an object
    /// loaded without its key names no row (only `insert()` is possible), and one loaded
    /// without some columns cannot write its whole row (the defaults it holds would replace
    /// the row's values).
    /// - Throws: ``ActiveObjectError/misuse(_:)``.
    func checkWritable(_ request: WriteRequest, schema: ModelSchema) throws {
        let state = recordState
        if let slot = schema.autoNumberedKeySlot, state != .persisted || request == .insert {
            var isAlias: Bool?
            try checkAutoNumberedKey(slot: slot, schema: schema, isAlias: &isAlias)
        }
        if state == .new || (state == .persisted && !isPartiallyLoaded) { return }
        if state == .keyless && request != .insert && !namesARowByHand(schema) {
            let key = Swift.type(of: self).primaryKeys.map { "\"\($0)\"" }.joined(separator: ", ")
            throw ActiveObjectError.misuse(
                "this \(schema.modelName) was loaded without its primary key (\(key)), so it names no row: select the key to save it")
        }
        guard isPartiallyLoaded else { return }
        let writesWholeRow: Bool
        switch request {
        case .insert, .upsert: writesWholeRow = true
        case .save, .update: writesWholeRow = !holdsItsRow(schema)
        }
        if writesWholeRow {
            throw ActiveObjectError.misuse(
                "this \(schema.modelName) was loaded without some of its columns, which hold defaults rather than the row's values: \(request)() would write its whole row, storing those defaults (select every column, or reload() it first)")
        }
    }

    /// A nil optional INTEGER key asks SQLite for a number: only the rowid alias
    /// (`INTEGER PRIMARY KEY`) gets one; any other table would store NULL, a key naming no row.
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)``.
    func checkAutoNumberedKey(slot: Int, schema: ModelSchema, isAlias known: inout Bool?) throws {
        guard withUnsafeObjectPointer({ schema.accessors[slot].isNull(in: $0) }),
              let database = Swift.type(of: self).resolvedDatabase else { return }
        let isAlias = known ?? database.isRowIDAlias(schema.columns[slot].name, of: schema.tableName)
        known = isAlias
        guard !isAlias else { return }
        throw ActiveObjectError.invalidValue(
            table: schema.tableName, column: schema.columns[slot].name,
            reason: "the key is nil, and SQLite numbers only an INTEGER PRIMARY KEY (the rowid), which this column is not")
    }

    /// A keyless object of a rowid model whose `id` was set by hand names that row.
    private func namesARowByHand(_ schema: ModelSchema) -> Bool {
        if case .rowID = schema.key { return id != nil }
        return false
    }

    /// Records a write that happened: the object now holds its row (with the values the
    /// library stamped), or is deleted.
    func applyWrite(_ plan: WritePlan, _ outcome: WritePlan.Outcome, schema: ModelSchema) {
        switch plan.operation {
        case .delete:
            notifyingObservers(ofOffsets: [], id: false, changes: true) {
                recordState = .deleted
                persistedRowID = nil
            }
            preloadedRelations = nil
        case .markRow:
            // A soft delete or restore: only the role columns now hold what the row holds.
            if outcome.changes > 0 {
                takeWrittenValues(plan.stamps.values, schema: schema, context: plan.stamps.context, forgettingEdits: true)
            }
        case .insert, .insertWithID, .upsert, .update, .checkExists:
            takeWrittenValues(plan.stamps.values + zip(plan.returnedSlots, outcome.returned).map { ($0, $1) },
                              schema: schema, context: plan.stamps.context, forgettingEdits: false)
            markPersisted(schema: schema, rowID: outcome.rowID ?? id)
        }
    }

    /// The values a write stamped or returned, as the object held them before: what a
    /// rollback puts back.
    private func valuesBefore(_ plan: WritePlan, schema: ModelSchema) -> [(slot: Int, value: DatabaseValue)] {
        let slots = plan.stamps.slots + plan.returnedSlots
        guard !slots.isEmpty else { return [] }
        return withUnsafeObjectPointer { base in
            slots.compactMap { slot in
                (try? schema.accessors[slot].encode(from: base, context: plan.stamps.context)).map { (slot, $0) }
            }
        }
    }

    /// Runs a planned write on the writer connection of `database` and records it in the
    /// object; inside a transaction, remembers the object's state for a rollback.
    @discardableResult
    func perform(_ plan: WritePlan, schema: ModelSchema, database: Database) throws -> WritePlan.Outcome {
        try database.withAccess(.write) { access in
            let connection = access.connection
            var snapshot = connection.transactionDepth > 0 ? rollbackSnapshot(schema: schema) : nil
            snapshot?.valuesBefore = valuesBefore(plan, schema: schema)
            snapshot?.context = plan.stamps.context
            let outcome = try plan.run(on: access)
            if let snapshot { RollbackLog.of(connection).record(self, snapshot) }
            applyWrite(plan, outcome, schema: schema)
            return outcome
        }
    }

    private func write(_ request: WriteRequest) throws {
        let (schema, database) = try schemaAndDatabase()
        if schema.isReadOnly { throw schema.readOnlyError("\(request)()") }
        try checkNoAsyncWrite(schema)
        try checkWritable(request, schema: schema)
        try runSaveHooks()
        let context = schema.context(in: database)
        let sql = schema.sql(in: database)
        if schema.roles.isEmpty && isPlainInsert(request, schema) {
            try insertNew(schema: schema, sql: sql, database: database, context: context)
        } else if let plan = try planWrite(request, schema: schema, sql: sql, context: context) {
            try perform(plan, schema: schema, database: database)
        }
        didSave()
    }

    /// Whether the write is an INSERT of the object as a new row, without an explicit id.
    private func isPlainInsert(_ request: WriteRequest, _ schema: ModelSchema) -> Bool {
        switch schema.key {
        case .rowID:
            return id == nil && (request == .insert || (request == .save && recordState != .keyless))
        case .columns:
            return request == .insert || (request == .save && recordState == .new)
        }
    }

    /// The most common write: the properties are bound straight into the cached INSERT.
    /// - Throws: ``ActiveObjectError/notInserted(table:)`` when SQLite ignored the INSERT (the
    ///   object stays new); the errors of binding and of SQLite.
    private func insertNew(schema: ModelSchema, sql: ModelSQL, database: Database, context: ValueContext) throws {
        try database.withAccess(.write) { access in try access.withConnection { connection in
            try connection.withStatement(sql.insertSQL, binding: { statement in
                try bindColumns(to: statement, schema: schema, context: context)
            }) { statement in
                while try statement.step() {}
            }
            // Nothing inserted (`ON CONFLICT IGNORE`, `RAISE(IGNORE)`): `last_insert_rowid`
            // names an earlier row, which this object must never take.
            if connection.lastChanges == 0 { throw ActiveObjectError.notInserted(table: schema.tableName) }
            if connection.transactionDepth > 0 {
                // A rollback of the enclosing transaction makes the object new again.
                let log = RollbackLog.of(connection)
                // (An auto-numbered key must go back to nil: that needs a log entry. So do
                // observers, told at the rollback rather than when the object is next used.)
                if recordState == .new && preloadedRelations == nil && schema.autoNumberedKeySlot == nil
                    && !isObserved,
                   let fate = log.currentFate {
                    insertedPending(fate)
                } else {
                    log.record(self, rollbackSnapshot(schema: schema))
                }
            }
            markPersisted(schema: schema, rowID: sql.hasRowID ? connection.lastInsertRowID : nil)
        } }
    }

    /// Deletes the object's row — or, for a model with a ``ColumnRole/deletedAt`` column,
    /// soft-deletes it: sets that column to the current date (and `.updatedAt`, and the next
    /// `.lockVersion`), after which every read leaves the row out (see
    /// ``delete(permanently:)-g4i3`` to really delete it, ``restore()-31e8y`` to undo it). Runs
    /// `willDelete()` first (throwing cancels) and `didDelete()` after. After a real delete
    /// the object keeps its values and its `id`: `save()` puts the row back with the same id,
    /// while `update()` throws ``ActiveObjectError/recordNotFound(table:id:)``; after a soft
    /// delete it still holds its row.
    ///
    /// With a ``ColumnRole/lockVersion`` column, the row must still hold the version the object
    /// was loaded with.
    ///
    /// - Returns: true when a row was deleted (or soft-deleted); false when the object had no
    ///   `id`, its row was already gone, or already soft-deleted.
    /// - Throws: ``ActiveObjectError/staleObject(table:key:)`` (optimistic locking: the row
    ///   changed or vanished since the object was loaded; nothing written);
    ///   ``ActiveObjectError/misuse(_:)`` for an object loaded without its primary key; what
    ///   `willDelete()` throws; ``DatabaseError`` (a `restrict` foreign key…).
    @discardableResult
    public func delete() throws -> Bool { try delete(permanently: false) }

    /// Deletes the object's row; with `permanently: true`, really deletes it even when the
    /// model soft-deletes (``ColumnRole/deletedAt``). `delete(permanently: false)` is
    /// ``delete()-8iq3o``.
    ///
    /// ```swift
    /// try post.delete(permanently: true)     // gone, not in the bin
    /// ```
    /// - Returns: true when a row was deleted (or soft-deleted).
    /// - Throws: as ``delete()-8iq3o``.
    @discardableResult
    public func delete(permanently: Bool) throws -> Bool {
        let (schema, database) = try schemaAndDatabase()
        if schema.isReadOnly { throw schema.readOnlyError("delete()") }
        try checkNoAsyncWrite(schema)
        guard let plan = try planDelete(schema: schema, database: database, permanently: permanently) else { return false }
        try willDelete()
        let outcome = try perform(plan, schema: schema, database: database)
        didDelete()
        return outcome.changes > 0
    }

    /// Undoes a soft delete: sets the ``ColumnRole/deletedAt`` column back to NULL (and
    /// `.updatedAt` to now, and the next `.lockVersion`), so that reads see the row again.
    /// The object's other unsaved changes stay unsaved.
    ///
    /// ```swift
    /// let bin = try Post.all.onlyDeleted().all()
    /// try bin[0].restore()
    /// ```
    /// - Throws: ``ActiveObjectError/misuse(_:)`` when the model has no `.deletedAt` column
    ///   or the object was loaded without its key; ``ActiveObjectError/recordNotFound(table:id:)``
    ///   when the object holds no row or its row is gone; ``ActiveObjectError/staleObject(table:key:)``
    ///   (optimistic locking); ``DatabaseError``.
    public func restore() throws {
        let (schema, database) = try schemaAndDatabase()
        if schema.isReadOnly { throw schema.readOnlyError("restore()") }
        try checkNoAsyncWrite(schema)
        let plan = try planRestore(schema: schema, database: database)
        try perform(plan, schema: schema, database: database)
    }

    /// The key arguments of the row a delete or restore targets, or nil when the object names
    /// none (no `id`).
    /// - Throws: ``ActiveObjectError/misuse(_:)`` for an object loaded without its key.
    private func markedRowKey(schema: ModelSchema, context: ValueContext, action: String) throws -> [DatabaseValue]? {
        if recordState == .keyless && !namesARowByHand(schema) {
            throw ActiveObjectError.misuse(
                "this \(schema.modelName) was loaded without its primary key, so it names no row to \(action)")
        }
        return try rowKeyArguments(schema: schema, context: context)
    }

    /// The DELETE of this object's row (with the version check of a `.lockVersion` model), the
    /// soft delete of a `.deletedAt` model unless `permanently`, or nil when the object names
    /// no row (no `id`).
    func planDelete(schema: ModelSchema, database: Database, permanently: Bool = false) throws -> WritePlan? {
        let context = schema.context(in: database)
        let sql = schema.sql(in: database)
        guard let key = try markedRowKey(schema: schema, context: context, action: "delete") else { return nil }
        if let deletedAt = schema.roles.deletedAt, !permanently {
            let (stamps, expected) = try markStamps(deleting: true, schema: schema, context: context)
            let versionArguments = expected.map { [$0] } ?? []
            var plan = WritePlan(
                operation: .markRow,
                sql: sql.conditionalUpdateSQL(slots: stamps.slots, checkingVersion: expected != nil,
                                              extraCondition: "\(schema.columns[deletedAt].quotedName) IS NULL"),
                arguments: stamps.values.map(\.value) + key + versionArguments,
                table: schema.tableName, rowID: id, hasRowID: sql.hasRowID)
            plan.stamps = stamps
            // Already soft-deleted (0 changes) is no error; a row that changed since is.
            plan.noChangeRule = .reported
            if let locked = sql.locked, expected != nil {
                plan.noChangeRule = .staleUnlessFound(check: locked.existsSQL, arguments: key + versionArguments,
                                                      key: keyDescription(schema: schema, key: key))
            }
            return plan
        }
        if let locked = sql.locked,
           let expected = try versionLoaded(schema: schema, values: encodedValues(schema: schema, context: context),
                                            context: context) {
            var plan = WritePlan(operation: .delete, sql: locked.deleteSQL, arguments: key + [expected],
                                 table: schema.tableName, rowID: id, hasRowID: sql.hasRowID)
            plan.noChangeRule = .stale(key: keyDescription(schema: schema, key: key))
            return plan
        }
        return WritePlan(operation: .delete, sql: sql.deleteSQL, arguments: key, table: schema.tableName,
                         rowID: id, hasRowID: sql.hasRowID)
    }

    /// The UPDATE that undoes a soft delete of this object's row.
    /// - Throws: as ``restore()-31e8y``.
    func planRestore(schema: ModelSchema, database: Database) throws -> WritePlan {
        guard schema.roles.deletedAt != nil else {
            throw ActiveObjectError.misuse(
                "\(schema.modelName) has no @Column(role: .deletedAt): restore() undoes a soft delete, which it does not do")
        }
        let context = schema.context(in: database)
        let sql = schema.sql(in: database)
        guard let key = try markedRowKey(schema: schema, context: context, action: "restore"),
              recordState != .new, recordState != .deleted else {
            throw ActiveObjectError.recordNotFound(table: schema.tableName, id: id)
        }
        let (stamps, expected) = try markStamps(deleting: false, schema: schema, context: context)
        var plan = WritePlan(
            operation: .markRow,
            sql: sql.conditionalUpdateSQL(slots: stamps.slots, checkingVersion: expected != nil, extraCondition: nil),
            arguments: stamps.values.map(\.value) + key + (expected.map { [$0] } ?? []),
            table: schema.tableName, rowID: id, hasRowID: sql.hasRowID)
        plan.stamps = stamps
        if expected != nil { plan.noChangeRule = .stale(key: keyDescription(schema: schema, key: key)) }
        return plan
    }

    /// Re-reads the object's row, replacing every property (and discarding unsaved changes),
    /// then calls ``didLoad()``.
    /// - Throws: ``ActiveObjectError/recordNotFound(table:id:)`` when the object has no `id`
    ///   or its row is gone; ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)``
    ///   (the object is left untouched); ``ActiveObjectError/misuse(_:)`` for an object loaded
    ///   without its primary key.
    public func reload() throws {
        let (schema, database) = try schemaAndDatabase()
        let context = schema.context(in: database)
        let key = try reloadKey(schema: schema, context: context)
        let sql = schema.sql(in: database)
        // Read into a scratch object first, so that a row that fails to decode leaves this
        // object untouched; take its values once the connection is given back (observers run
        // then, free to use the database).
        let loaded = try database.withAccess(.read) { access in
            try access.connection.withStatement(sql.findByKeySQL, key) { statement -> ActiveObject? in
                guard try statement.step() else { return nil }
                let loader = ObjectLoader(canonicalFor: schema, context: context)
                let loaded = schema.newObject()
                try loader.fill(loaded, from: statement)
                return loaded
            }
        }
        guard let loaded else { throw ActiveObjectError.recordNotFound(table: schema.tableName, id: id) }
        takeRow(of: loaded, schema: schema)
        preloadedRelations = nil
        didLoad()
    }

    /// The key `reload()` reads by, or the error that prevents it.
    func reloadKey(schema: ModelSchema, context: ValueContext) throws -> [DatabaseValue] {
        if recordState == .keyless && !namesARowByHand(schema) {
            throw ActiveObjectError.misuse(
                "this \(schema.modelName) was loaded without its primary key, so it names no row to reload")
        }
        guard let key = try rowKeyArguments(schema: schema, context: context) else {
            throw ActiveObjectError.recordNotFound(table: schema.tableName, id: nil)
        }
        return key
    }
}
