extension Query {
    /// Groups the matching rows by a column's value, for per-group aggregates:
    ///
    /// ```swift
    /// let perCustomer: [String?: Int] = try Order.all.group(by: \.$customerId).count()
    /// let freight: [Int64?: Decimal] = try Order.all.group(by: \.$employeeId).sum(\.$freight)
    /// ```
    /// The keys are the column's values as its property reads them; rows whose value is NULL
    /// form a group keyed `nil` (for an optional column).
    public func group<Key: ColumnValue & Hashable>(by column: KeyPath<Model, ColumnReference<Key>>) -> GroupedQuery<Model, Key> {
        GroupedQuery(query: self, key: SendableKeyPath(keyPath: column))
    }
}

/// A query whose rows are grouped by one column (see `Query.group(by:)`); its terminals return
/// one value per group, in a dictionary keyed by the group's value.
///
/// `count()` counts rows; `sum`, `min`, `max` and `average` aggregate a column (NULLs
/// ignored; a group whose values are all NULL sums to 0 and has no minimum, maximum or
/// average — it is absent from those dictionaries). `Decimal` columns are aggregated exactly.
public struct GroupedQuery<Model: ActiveObject, Key: ColumnValue & Hashable>: Sendable {
    let query: Query<Model>
    let key: SendableKeyPath

    /// Runs one aggregate per group and converts the keys and values.
    private func run<V: ColumnValue>(_ aggregate: Aggregate?, _ column: AnyKeyPath?, as _: V.Type) throws -> [Key: V] {
        let (rows, context, name) = try query.aggregates(aggregate, of: column, by: key.keyPath)
        var result: [Key: V] = [:]
        for (group, stored) in rows {
            guard let groupKey = Key.fromDatabaseValue(group, in: context) else {
                throw ActiveObjectError.typeMismatch(table: Model.tableName, column: "group key", rowID: nil,
                                                     expected: String(describing: Key.self), found: group.description)
            }
            if stored.isNull {
                if aggregate == .sum { result[groupKey] = try V.fromDatabaseValue(.integer(0), in: context).unwrap(name) }
                continue
            }
            guard let value = V.fromDatabaseValue(stored, in: context) else {
                throw ActiveObjectError.typeMismatch(table: Model.tableName, column: name, rowID: nil,
                                                     expected: String(describing: V.self), found: stored.description)
            }
            result[groupKey] = value
        }
        return result
    }

    /// The number of rows in each group.
    /// - Throws: the errors of the query; `typeMismatch` when a group's value does not fit `Key`.
    public func count() throws -> [Key: Int] { try run(nil, nil, as: Int.self) }

    /// The sum of a numeric column in each group.
    /// - Throws: as ``count()-6npkq``; `typeMismatch` when a sum does not fit `V`.
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> [Key: V] {
        try run(.sum, column, as: V.self)
    }

    /// The sum of an optional numeric column in each group (NULLs ignored).
    /// - Throws: as ``sum(_:)``.
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) throws -> [Key: V] {
        try run(.sum, column, as: V.self)
    }

    /// The smallest value of a column in each group.
    /// - Throws: as ``count()-6npkq``.
    public func min<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> [Key: V] {
        try run(.min, column, as: V.self)
    }

    /// The smallest non-NULL value of an optional column in each group.
    /// - Throws: as ``count()-6npkq``.
    public func min<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V?>>) throws -> [Key: V] {
        try run(.min, column, as: V.self)
    }

    /// The largest value of a column in each group.
    /// - Throws: as ``count()-6npkq``.
    public func max<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> [Key: V] {
        try run(.max, column, as: V.self)
    }

    /// The largest non-NULL value of an optional column in each group.
    /// - Throws: as ``count()-6npkq``.
    public func max<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V?>>) throws -> [Key: V] {
        try run(.max, column, as: V.self)
    }

    /// The mean of a numeric column in each group.
    /// - Throws: as ``count()-6npkq``.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) throws -> [Key: Double] {
        try run(.average, column, as: Double.self)
    }

    /// The mean of an optional numeric column in each group (NULLs ignored).
    /// - Throws: as ``count()-6npkq``.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) throws -> [Key: Double] {
        try run(.average, column, as: Double.self)
    }

    // MARK: Async forms

    private func database() throws -> Database {
        guard let database = Model.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: String(describing: Model.self)) }
        return database
    }

    /// Async form of ``count()``: runs on a reader thread.
    /// - Throws: as ``count()``.
    public func count() async throws -> [Key: Int] {
        try await database().perform(.reading) { try self.count() }
    }

    /// Async form of ``sum(_:)-(KeyPath<Model,ColumnReference<V>>)``.
    /// - Throws: as ``count()-6npkq``.
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) async throws -> [Key: V] {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) { try self.run(.sum, path.keyPath, as: V.self) }
    }

    /// Async form of ``sum(_:)-(KeyPath<Model,ColumnReference<V?>>)``.
    /// - Throws: as ``count()-6npkq``.
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) async throws -> [Key: V] {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) { try self.run(.sum, path.keyPath, as: V.self) }
    }

    /// Async form of ``min(_:)-(KeyPath<Model,ColumnReference<V>>)``.
    /// - Throws: as ``count()-6npkq``.
    public func min<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) async throws -> [Key: V] {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) { try self.run(.min, path.keyPath, as: V.self) }
    }

    /// Async form of ``min(_:)-(KeyPath<Model,ColumnReference<V?>>)``.
    /// - Throws: as ``count()-6npkq``.
    public func min<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V?>>) async throws -> [Key: V] {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) { try self.run(.min, path.keyPath, as: V.self) }
    }

    /// Async form of ``max(_:)-(KeyPath<Model,ColumnReference<V>>)``.
    /// - Throws: as ``count()-6npkq``.
    public func max<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) async throws -> [Key: V] {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) { try self.run(.max, path.keyPath, as: V.self) }
    }

    /// Async form of ``max(_:)-(KeyPath<Model,ColumnReference<V?>>)``.
    /// - Throws: as ``count()-6npkq``.
    public func max<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V?>>) async throws -> [Key: V] {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) { try self.run(.max, path.keyPath, as: V.self) }
    }

    /// Async form of ``average(_:)-(KeyPath<Model,ColumnReference<V>>)``.
    /// - Throws: as ``count()-6npkq``.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) async throws -> [Key: Double] {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) { try self.run(.average, path.keyPath, as: Double.self) }
    }

    /// Async form of ``average(_:)-(KeyPath<Model,ColumnReference<V?>>)``.
    /// - Throws: as ``count()-6npkq``.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) async throws -> [Key: Double] {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) { try self.run(.average, path.keyPath, as: Double.self) }
    }
}

private extension Optional {
    /// The value, or a `typeMismatch` naming `column`.
    func unwrap(_ column: String) throws -> Wrapped {
        guard let self else {
            throw ActiveObjectError.typeMismatch(table: "(aggregate)", column: column, rowID: nil,
                                                 expected: String(describing: Wrapped.self), found: "0")
        }
        return self
    }
}
