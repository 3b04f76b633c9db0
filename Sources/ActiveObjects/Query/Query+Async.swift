// Async forms of the query terminals. A query is a `Sendable` value: it is built where the
// caller is, then run on one of the database's own threads; the objects it loads are handed
// to the caller as `sending` values (they become the caller's, e.g. a `@MainActor` model's).

extension Query {
    /// The database the query runs on, for choosing its thread.
    private func database() throws -> Database {
        guard let database = Model.resolvedDatabase else {
            throw ActiveObjectError.noDatabase(model: String(describing: Model.self))
        }
        return database
    }

    /// Async form of ``all()``: runs on a reader thread.
    ///
    /// ```swift
    /// people = try await Person.where(\.$active == true).order(by: \.$name).all()
    /// ```
    /// - Throws: as ``all()``.
    public func all() async throws -> sending [Model] {
        try await database().perform(.reading) { try self.all() }
    }

    /// Async form of ``first()``.
    /// - Throws: as ``all()-2jzog``.
    public func first() async throws -> sending Model? {
        try await database().perform(.reading) { try self.first() }
    }

    /// Async form of ``count()``.
    /// - Throws: as ``all()-2jzog``.
    public func count() async throws -> Int {
        try await database().perform(.reading) { try self.count() }
    }

    /// Async form of ``exists()``.
    /// - Throws: as ``all()-2jzog``.
    public func exists() async throws -> Bool {
        try await database().perform(.reading) { try self.exists() }
    }

    /// Async form of ``page(_:size:)``.
    /// - Throws: as ``page(_:size:)``.
    public func page(_ number: Int, size: Int) async throws -> sending [Model] {
        let query = try pageQuery(number, size: size)
        return try await database().perform(.reading) { try query.all() }
    }

    /// Async form of ``pluck(_:)``.
    /// - Throws: as ``all()-2jzog``.
    public func pluck<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) async throws -> [V] {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) {
            try self.pluck(path.keyPath as! KeyPath<Model, ColumnReference<V>>)
        }
    }

    /// Async form of ``sum(_:)-(KeyPath<Model,ColumnReference<V>>)``.
    /// - Throws: as ``all()-2jzog``.
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) async throws -> V {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) {
            try self.sum(path.keyPath as! KeyPath<Model, ColumnReference<V>>)
        }
    }

    /// Async form of ``sum(_:)-(KeyPath<Model,ColumnReference<V?>>)``.
    /// - Throws: as ``all()-2jzog``.
    public func sum<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) async throws -> V {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) {
            try self.sum(path.keyPath as! KeyPath<Model, ColumnReference<V?>>)
        }
    }

    /// Async form of ``min(_:)``.
    /// - Throws: as ``all()-2jzog``.
    public func min<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) async throws -> V? {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) {
            try self.min(path.keyPath as! KeyPath<Model, ColumnReference<V>>)
        }
    }

    /// Async form of ``max(_:)``.
    /// - Throws: as ``all()-2jzog``.
    public func max<V: ColumnValue>(_ column: KeyPath<Model, ColumnReference<V>>) async throws -> V? {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) {
            try self.max(path.keyPath as! KeyPath<Model, ColumnReference<V>>)
        }
    }

    /// Async form of ``average(_:)-(KeyPath<Model,ColumnReference<V>>)``.
    /// - Throws: as ``all()-2jzog``.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V>>) async throws -> Double? {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) {
            try self.average(path.keyPath as! KeyPath<Model, ColumnReference<V>>)
        }
    }

    /// Async form of ``average(_:)-(KeyPath<Model,ColumnReference<V?>>)``.
    /// - Throws: as ``all()-2jzog``.
    public func average<V: ColumnValue & Numeric>(_ column: KeyPath<Model, ColumnReference<V?>>) async throws -> Double? {
        let path = SendableKeyPath(keyPath: column)
        return try await database().perform(.reading) {
            try self.average(path.keyPath as! KeyPath<Model, ColumnReference<V?>>)
        }
    }
}
