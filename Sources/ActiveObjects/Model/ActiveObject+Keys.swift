extension ActiveObject {
    /// The values of the key columns now, in key order (natural and composite keys).
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)``.
    func currentKeyValues(schema: ModelSchema, context: ValueContext) throws -> [DatabaseValue] {
        try withUnsafeObjectPointer { base in
            try schema.keySlots.map { slot in
                do {
                    return try schema.accessors[slot].encode(from: base, context: context)
                } catch {
                    throw ActiveObjectError.invalidValue(table: schema.tableName, column: schema.columns[slot].name,
                                                         reason: "\(error)")
                }
            }
        }
    }

    /// The values of the key columns as the row holds them: a key column assigned since the
    /// last load or save gives its value from before (changing a natural key and saving
    /// renames the row's key: `UPDATE … SET key = new WHERE key = old`).
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)``.
    func persistedKeyValues(schema: ModelSchema, context: ValueContext) throws -> [DatabaseValue] {
        try withUnsafeObjectPointer { base in
            try schema.keySlots.map { slot in
                let accessor = schema.accessors[slot]
                do {
                    if let original = edits?.original(atOffset: accessor.valueOffset) {
                        return try accessor.encodeOriginal(original, context: context)
                    }
                    return try accessor.encode(from: base, context: context)
                } catch {
                    throw ActiveObjectError.invalidValue(table: schema.tableName, column: schema.columns[slot].name,
                                                         reason: "\(error)")
                }
            }
        }
    }

    /// The parameters of the model's key condition naming the row this object was loaded from
    /// or saved to (or, for an object holding no row, the row its key names now); nil when it
    /// names none (a rowid model without `id`).
    func rowKeyArguments(schema: ModelSchema, context: ValueContext) throws -> [DatabaseValue]? {
        switch schema.key {
        case .rowID:
            return id.map { [.integer($0)] }
        case .columns:
            return recordState == .persisted
                ? try persistedKeyValues(schema: schema, context: context)
                : try currentKeyValues(schema: schema, context: context)
        }
    }

    /// The value other tables' foreign keys hold to point at this object (its `id`, or its
    /// single natural key column); nil when it has none yet. For an object holding its row,
    /// the key as the row holds it: a key renamed but not saved yet still names the children
    /// of the stored row.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` for a composite key.
    func referencedKeyValue(schema: ModelSchema) throws -> DatabaseValue? {
        guard let key = schema.referencedKey else {
            throw ActiveObjectError.invalidModel(
                model: schema.modelName, reason: "its key \(Swift.type(of: self).primaryKeys) cannot be referenced by one foreign-key column")
        }
        if key.slot < 0 { return id.map { .integer($0) } }
        // Encoded as the row stores it: with the database's date strategy when the model has none.
        let context = Swift.type(of: self).resolvedDatabase.map { schema.context(in: $0) }
            ?? ValueContext(dateStrategy: schema.dateStrategy ?? .iso8601Text)
        let accessor = schema.accessors[key.slot]
        let value = try withUnsafeObjectPointer { base in
            if recordState == .persisted, let original = edits?.original(atOffset: accessor.valueOffset) {
                return try accessor.encodeOriginal(original, context: context)
            }
            return try accessor.encode(from: base, context: context)
        }
        // A new object's natural key is whatever it holds; a NULL key names nothing.
        return value.isNull ? nil : value
    }
}

extension ActiveRecord where Self: ActiveObject {
    /// The object whose single-column primary key (natural or `id`) equals `key`, or nil (also
    /// when the row is soft-deleted: `Customer.all.withDeleted().where([key column: key]).first()`
    /// finds it).
    ///
    /// ```swift
    /// let alfki: Customer? = try Customer.find(key: "ALFKI")
    /// ```
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` when the model's key has several
    ///   columns (use `find(key: [column: value])`); otherwise as ``ActiveRecord/find(id:)-6olih``.
    public static func find<Key: ColumnValue>(key: Key) throws -> Self? {
        let schema = try ModelSchema.of(self)
        guard schema.keySlots.count <= 1 else {
            throw ActiveObjectError.invalidArgument(
                "\(schema.modelName) has a composite key \(primaryKeys): use find(key: [\"column\": value, …])")
        }
        let name = schema.keySlots.first.map { schema.columns[$0].name } ?? schema.primaryKey
        return try Query<Self>().where([name: key]).limit(1).all().first
    }

    /// The object whose (composite) primary key has these values, or nil (also when the row is
    /// soft-deleted). The dictionary must give every key column (property or column names),
    /// and nothing else.
    ///
    /// ```swift
    /// let line = try OrderDetail.find(key: ["OrderID": 10248, "ProductID": 11])
    /// ```
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` when the names are not exactly the
    ///   key's columns; otherwise as ``ActiveRecord/find(id:)-6olih``.
    public static func find(key values: [String: Any?]) throws -> Self? {
        try keyQuery(values).all().first
    }

    /// The query for ``find(key:)-([String:Any?])``, its names checked against the key.
    static func keyQuery(_ values: [String: Any?]) throws -> Query<Self> {
        let schema = try ModelSchema.of(self)
        let keySlots = schema.keySlots.isEmpty ? [-1] : schema.keySlots
        let given = try values.keys.map { try schema.slot(forKey: $0) }
        guard Set(given) == Set(keySlots), given.count == keySlots.count else {
            let expected = keySlots.map { schema.columnName(slot: $0) }
            throw ActiveObjectError.invalidArgument(
                "find(key:) of \(schema.modelName) needs exactly its key columns \(expected), got \(values.keys.sorted())")
        }
        // A key names one row at most: no ORDER BY (a composite WITHOUT ROWID table has no
        // rowid to order by).
        return Query<Self>().where(values).limit(1)
    }

    /// Async form of ``find(key:)-(Key)``.
    /// - Throws: as ``find(key:)-(Key)``.
    public static func find<Key: ColumnValue>(key: Key) async throws -> sending Self? {
        try await requireDatabase().perform(.reading) { try Self.find(key: key) }
    }

    /// Async form of ``find(key:)-([String:Any?])``.
    /// - Throws: as ``find(key:)-([String:Any?])``.
    public static func find(key values: [String: Any?]) async throws -> sending Self? {
        let query = try keyQuery(values)
        return try await requireDatabase().perform(.reading) { try query.all().first }
    }
}
