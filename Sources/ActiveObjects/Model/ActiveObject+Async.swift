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
        try await withAsyncWriteSlot {
            let (schema, database) = try schemaAndDatabase()
            if schema.isReadOnly { throw schema.readOnlyError("\(request)()") }
            try checkWritable(request, schema: schema)
            try runSaveHooks()
            let context = schema.context(in: database)
            var written = try encodedValues(schema: schema, context: context)
            if let plan = try planWrite(request, schema: schema, sql: schema.sql(in: database), context: context) {
                let outcome = try await database.perform(.writing) {
                    try database.withAccess(.write) { try plan.run(on: $0) }
                }
                // What the row holds: the object's values, with the stamps and returned roles.
                plan.stamps.apply(to: &written)
                for (slot, value) in zip(plan.returnedSlots, outcome.returned) { written[slot] = value }
                applyWrite(plan, outcome, schema: schema)
                keepChanges(since: written, schema: schema, context: context)
            }
            didSave()
        }
    }

    /// Async form of ``delete()-8iq3o`` (a soft delete for a model with a `.deletedAt` column).
    /// - Returns: true when a row was deleted (or soft-deleted).
    /// - Throws: as ``delete()-8iq3o``.
    @discardableResult
    nonisolated(nonsending) public func delete() async throws -> Bool { try await delete(permanently: false) }

    /// Async form of ``delete(permanently:)-g4i3``.
    /// - Returns: true when a row was deleted (or soft-deleted).
    /// - Throws: as ``delete()-8iq3o``.
    @discardableResult
    nonisolated(nonsending) public func delete(permanently: Bool) async throws -> Bool {
        try await withAsyncWriteSlot {
            let (schema, database) = try schemaAndDatabase()
            if schema.isReadOnly { throw schema.readOnlyError("delete()") }
            guard let plan = try planDelete(schema: schema, database: database, permanently: permanently) else { return false }
            try willDelete()
            let outcome = try await database.perform(.writing) {
                try database.withAccess(.write) { try plan.run(on: $0) }
            }
            applyWrite(plan, outcome, schema: schema)
            didDelete()
            return outcome.changes > 0
        }
    }

    /// Async form of ``restore()-31e8y``.
    /// - Throws: as ``restore()-31e8y``.
    nonisolated(nonsending) public func restore() async throws {
        try await withAsyncWriteSlot {
            let (schema, database) = try schemaAndDatabase()
            if schema.isReadOnly { throw schema.readOnlyError("restore()") }
            let plan = try planRestore(schema: schema, database: database)
            let outcome = try await database.perform(.writing) {
                try database.withAccess(.write) { try plan.run(on: $0) }
            }
            applyWrite(plan, outcome, schema: schema)
        }
    }

    /// Runs `body`, an async write of this object, after any other async write of it has
    /// finished, and marks the object as having one in flight meanwhile.
    ///
    /// A write is planned from the object's state before it awaits the writer: two writes of one
    /// object planned at once (a double tap on Save) would both insert it. So the second waits
    /// for the first, then plans from the state the first left (an update, or nothing). A
    /// synchronous write of the object meanwhile throws ``ActiveObjectError/misuse(_:)``.
    nonisolated(nonsending) private func withAsyncWriteSlot<T>(_ body: nonisolated(nonsending) () async throws -> T) async throws -> T {
        while asyncWriteInFlight {
            // The object belongs to the caller's isolation domain, and so do both writes: the
            // first one's end (which resumes the waiters) cannot run between this check and
            // the registration below.
            await withCheckedContinuation { waiter in AsyncWriteWaiters.add(waiter, for: self) }
        }
        asyncWriteInFlight = true
        defer {
            asyncWriteInFlight = false
            AsyncWriteWaiters.resumeAll(for: self)
        }
        return try await body()
    }

    /// After an async write planned from the values `written` (every column, encoded) was
    /// applied: the columns assigned since keep their change, relative to what was written,
    /// so that the next `save()` writes them (an edit made while the write awaited the writer).
    func keepChanges(since written: [DatabaseValue], schema: ModelSchema, context: ValueContext) {
        withUnsafeObjectPointer { base in
            var scratch: ActiveObject?
            for (slot, accessor) in schema.accessors.enumerated() {
                // A nil auto-numbered key was written as NULL: the row holds the number SQLite gave it.
                var before = written[slot]
                if slot == schema.autoNumberedKeySlot, before == .null, let id { before = .integer(id) }
                if let now = try? accessor.encode(from: base, context: context),
                   DatabaseValue.sameStoredValue(now, before) { continue }
                // The value before this edit is the one written: rebuild it as a Swift value.
                let holder = scratch ?? schema.newObject()
                scratch = holder
                holder.withUnsafeObjectPointer { scratchBase in
                    let original = accessor.load(before, into: scratchBase, context: context)
                        ? accessor.value(from: scratchBase) : accessor.value(from: base)
                    setOriginal(original, atOffset: accessor.valueOffset)
                }
            }
        }
    }

    /// Async form of ``reload()``: the row is read on a reader thread, and stored into the
    /// object on the caller's actor.
    /// - Throws: as ``reload()``.
    nonisolated(nonsending) public func reload() async throws {
        let (schema, database) = try schemaAndDatabase()
        let key = try reloadKey(schema: schema, context: schema.context(in: database))
        let sql = schema.sql(in: database)
        let row = try await database.perform(.reading) { () throws -> [DatabaseValue]? in
            try database.withAccess(.read) { access in
                try access.connection.withStatement(sql.findByKeySQL, key) { statement in
                    guard try statement.step() else { return nil }
                    return (0..<statement.columnCount).map { statement.value(at: $0) }
                }
            }
        }
        guard let row else { throw ActiveObjectError.recordNotFound(table: schema.tableName, id: id) }
        let loader = ObjectLoader(canonicalFor: schema, context: schema.context(in: database))
        // Into a scratch object first: a row that does not fit leaves this object untouched.
        let loaded = schema.newObject()
        try loader.fill(loaded, row: row)
        takeRow(of: loaded, schema: schema)
        preloadedRelations = nil
        didLoad()
    }
}

/// The async writes waiting for an earlier async write of the same object to finish.
enum AsyncWriteWaiters {
    private static let waiters = LockedValue<[ObjectIdentifier: [CheckedContinuation<Void, Never>]]>([:])

    static func add(_ waiter: CheckedContinuation<Void, Never>, for object: ActiveObject) {
        waiters.withLock { $0[ObjectIdentifier(object), default: []].append(waiter) }
    }

    /// Resumes every write waiting for `object` (the first to run takes the slot; the others
    /// wait again).
    static func resumeAll(for object: ActiveObject) {
        let resumed = waiters.withLock { $0.removeValue(forKey: ObjectIdentifier(object)) }
        for waiter in resumed ?? [] { waiter.resume() }
    }
}
