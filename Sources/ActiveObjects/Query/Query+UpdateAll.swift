extension Query {
    /// Sets columns of every matching row in one `UPDATE` and returns how many rows changed.
    ///
    /// ```swift
    /// let changed = try Person.where(\.$active == false).updateAll(["rating": nil])
    /// ```
    /// Keys are property or column names, checked like criteria keys (an unknown one throws
    /// ``ActiveObjectError/unknownColumn(table:column:)`` before any SQL exists). Values are
    /// converted as the model would store them (a `Date` with the model's date strategy, a
    /// value of another numeric type checked to fit the property). No hooks or validation run;
    /// live queries see the change like any commit.
    ///
    /// It changes the rows the query reads: for a model with a `@Column(role: .deletedAt)`,
    /// not the soft-deleted ones unless the query says ``withDeleted()`` or ``onlyDeleted()``
    /// (`Post.all.onlyDeleted().updateAll(["deletedAt": nil])` restores the bin). The column
    /// roles count as for a save: a `.lockVersion` column is incremented in every changed row
    /// (`"lockVersion" = "lockVersion" + 1`), so objects loaded before are stale; an
    /// `.updatedAt` column is set to the current date — unless `values` sets it, or inside
    /// ``ActiveObject/withoutTimestamps(_:)-(()->R)``.
    /// - Throws: ``ActiveObjectError/unknownColumn(table:column:)``,
    ///   ``ActiveObjectError/invalidValue(table:column:reason:)`` for a value the property
    ///   cannot hold (NULL into a non-optional, text into an `Int`…), or when a row's
    ///   `.lockVersion` is the largest its property can hold (an `Int8` at 127: nothing written),
    ///   ``ActiveObjectError/invalidArgument(_:)`` for no values, the rowid `id`, or two keys
    ///   naming one column (`"shipCity"` and `"ShipCity"`);
    ///   ``DatabaseError`` (constraints…); ``ActiveObjectError/misuse(_:)`` inside `db.read`.
    @discardableResult
    public func updateAll(_ values: [String: Any?]) throws -> Int {
        try updateAllStatement(values).run()
    }

    /// Async form of ``updateAll(_:)``: runs on the writer thread. (The date and the
    /// `withoutTimestamps` scope are read on the caller's task.)
    /// - Throws: as ``updateAll(_:)``.
    @discardableResult
    public func updateAll(_ values: [String: Any?]) async throws -> Int {
        let statement = try updateAllStatement(values)
        return try await statement.database.perform(.writing) { try statement.run() }
    }

    /// The UPDATE of ``updateAll(_:)`` and its arguments (the values, then the filters').
    private func updateAllStatement(_ values: [String: Any?]) throws -> WriteStatement {
        let compiled = try compile()
        let schema = compiled.schema
        if schema.isReadOnly { throw schema.readOnlyError("updateAll(_:)") }
        guard !values.isEmpty else { throw ActiveObjectError.invalidArgument("updateAll needs at least one column to set") }
        var assignments: [String] = []
        var arguments: [DatabaseValue] = []
        let scratch = schema.newObject()
        var keyOfSlot: [Int: String] = [:]
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            let slot = try schema.slot(forKey: key)
            guard slot >= 0 else {
                throw ActiveObjectError.invalidArgument("updateAll cannot set the rowid \"\(key)\" of \(schema.modelName)")
            }
            // A property name and its column name together would set one column twice.
            if let other = keyOfSlot.updateValue(key, forKey: slot) {
                throw ActiveObjectError.invalidArgument(
                    "updateAll: \"\(other)\" and \"\(key)\" both name the column \"\(schema.columns[slot].name)\" of \(schema.tableName)")
            }
            assignments.append("\(schema.columns[slot].quotedName) = ?")
            arguments.append(try Self.storedValue(value, slot: slot, schema: schema, context: compiled.context, scratch: scratch))
        }
        // The roles: `.updatedAt` stamped (unless set here, or inside `withoutTimestamps`),
        // `.lockVersion` counted (unless set here).
        var now: DatabaseValue?
        if let slot = schema.roles.updatedAt, keyOfSlot[slot] == nil, !Timestamps.areSuspended {
            now = try Timestamps.now(in: compiled.context, table: schema.tableName, column: schema.columns[slot].name).stored
        }
        return Self.updateStatement(setting: assignments, arguments, assigned: Set(keyOfSlot.keys), now: now, compiled)
    }

    /// `value` as the column at `slot` stores it: converted to the property's type (through a
    /// scratch object, as a fetched row would be), then encoded as a save would.
    static func storedValue(_ value: Any?, slot: Int, schema: ModelSchema, context: ValueContext,
                            scratch: ActiveObject) throws -> DatabaseValue {
        let column = schema.columns[slot]
        let accessor = schema.accessors[slot]
        func refuse(_ reason: String) -> ActiveObjectError {
            .invalidValue(table: schema.tableName, column: column.name, reason: reason)
        }
        // The property's own type (a JSON column's Codable value, too).
        if let value, let encoded = try? accessor.encodeOriginal(value, context: context) { return encoded }
        let stored: DatabaseValue
        switch CriteriaValue(value) {
        case .null:
            stored = .null
        case .value(let single):
            do { stored = try single.databaseValue(in: context) } catch { throw refuse("\(error)") }
        case .list, .unsupported:
            throw refuse("\(value.map { String(describing: type(of: $0)) } ?? "nil") is not a value of \(accessor.valueTypeName)")
        }
        let fits = scratch.withUnsafeObjectPointer { accessor.load(stored, into: $0, context: context) }
        guard fits else { throw refuse("\(accessor.valueTypeName) cannot hold \(stored)") }
        do {
            return try scratch.withUnsafeObjectPointer { try accessor.encode(from: $0, context: context) }
        } catch {
            throw refuse("\(error)")
        }
    }
}
