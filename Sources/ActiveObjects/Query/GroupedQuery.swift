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
    ///
    /// SQL groups by the stored value, yet two stored forms can read as one Swift key (legacy
    /// date texts of one instant, `1.5` and `1.50` in a `Decimal` column, upper- and
    /// lower-case UUID text): such groups are merged — counts and sums added, the smaller
    /// minimum and larger maximum kept, averages weighted by their counts.
    private func run<V: ColumnValue>(_ aggregate: Aggregate?, _ column: AnyKeyPath?, as _: V.Type) throws -> [Key: V] {
        let (rows, context, name) = try query.aggregates(aggregate, of: column, by: key.keyPath)
        var result: [Key: V] = [:]
        var weights: [Key: Int64] = [:]
        for row in rows {
            guard let groupKey = Key.fromDatabaseValue(row.group, in: context) else {
                throw ActiveObjectError.typeMismatch(table: Model.tableName, column: "group key", rowID: nil,
                                                     expected: String(describing: Key.self), found: row.group.description)
            }
            let value: V
            if row.value.isNull {
                guard aggregate == .sum else { continue }
                value = try V.fromDatabaseValue(.integer(0), in: context).unwrap(name)
            } else {
                guard let converted = V.fromDatabaseValue(row.value, in: context) else {
                    throw ActiveObjectError.typeMismatch(table: Model.tableName, column: name, rowID: nil,
                                                         expected: String(describing: V.self), found: row.value.description)
                }
                value = converted
            }
            guard let earlier = result[groupKey] else {
                result[groupKey] = value
                weights[groupKey] = row.weight
                continue
            }
            let earlierWeight = weights[groupKey] ?? 1
            result[groupKey] = try merge(earlier, weight: earlierWeight, with: value, weight: row.weight,
                                         aggregate, column: name, key: groupKey)
            weights[groupKey] = earlierWeight + row.weight
        }
        return result
    }

    /// Two groups' aggregates for one key, as one.
    /// - Throws: ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)`` when the
    ///   values cannot be combined (a minimum or maximum of a type that is not `Comparable`).
    private func merge<V>(_ a: V, weight wa: Int64, with b: V, weight wb: Int64, _ aggregate: Aggregate?,
                          column: String, key: Key) throws -> V {
        switch aggregate {
        case nil:
            if let a = a as? Int, let b = b as? Int, let total = (a + b) as? V { return total }
        case .sum:
            if let sum = Self.added(a, b) { return sum }
        case .min, .max:
            if let a = a as? any Comparable, let chosen = Self.chosen(a, b, smaller: aggregate == .min) { return chosen }
        case .average:
            if let a = a as? Double, let b = b as? Double, wa + wb > 0,
               let mean = ((a * Double(wa) + b * Double(wb)) / Double(wa + wb)) as? V {
                return mean
            }
        }
        throw ActiveObjectError.typeMismatch(
            table: Model.tableName, column: column, rowID: nil, expected: "one aggregate per group key",
            found: "several stored values of the group column reading as \(key), whose \(String(describing: V.self)) aggregates cannot be combined")
    }

    private static func added<V>(_ a: V, _ b: V) -> V? {
        guard let a = a as? any Numeric else { return nil }
        return sum(a, b) as? V
    }

    private static func sum<N: Numeric>(_ a: N, _ b: Any) -> N? {
        (b as? N).map { a + $0 }
    }

    private static func chosen<C: Comparable, V>(_ a: C, _ b: V, smaller: Bool) -> V? {
        guard let b = b as? C else { return nil }
        let pick = smaller ? Swift.min(a, b) : Swift.max(a, b)
        return pick as? V
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
