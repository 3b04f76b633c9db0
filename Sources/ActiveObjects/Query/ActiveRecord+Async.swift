// Async forms of the class-level finders, counts and deletes: each runs on one of the
// database's own threads (reads on a reader thread, deletes on the writer thread) and hands
// the objects it loads to the caller as `sending` values.

extension ActiveRecord where Self: ActiveObject {
    /// The model's database, or ``ActiveObjectError/noDatabase(model:)``.
    static func requireDatabase() throws -> Database {
        guard let database = self.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: String(describing: self)) }
        return database
    }

    /// Async form of ``find(id:)``.
    /// - Throws: as ``find(id:)``.
    public static func find(id: Int64) async throws -> sending Self? {
        try await requireDatabase().perform(.reading) { try Self.find(id: id) }
    }

    /// Async form of ``find(ids:)``.
    /// - Throws: as ``ActiveRecord/find(id:)-6olih``.
    public static func find(ids: [Int64]) async throws -> sending [Self] {
        try await requireDatabase().perform(.reading) { try Self.find(ids: ids) }
    }

    /// Async form of ``findAll()``.
    /// - Throws: as ``ActiveRecord/find(id:)-6olih``.
    public static func findAll() async throws -> sending [Self] {
        try await requireDatabase().perform(.reading) { try Self.findAll() }
    }

    /// Async form of ``find(where:)``.
    /// - Throws: as ``find(where:)``.
    public static func find(where criteria: [String: Any?]) async throws -> sending [Self] {
        let query = Query<Self>().where(criteria)
        return try await requireDatabase().perform(.reading) { try query.all() }
    }

    /// Async form of ``findFirst(where:)``.
    /// - Throws: as ``ActiveRecord/find(where:)-8xnob``.
    public static func findFirst(where criteria: [String: Any?]) async throws -> sending Self? {
        let query = Query<Self>().where(criteria)
        return try await requireDatabase().perform(.reading) { try query.first() }
    }

    /// Async form of ``countAll()``.
    /// - Throws: as ``countAll()``.
    public static func countAll() async throws -> Int {
        try await requireDatabase().perform(.reading) { try Self.countAll() }
    }

    /// Async form of ``count(where:)``.
    /// - Throws: as ``ActiveRecord/find(where:)-8xnob``.
    public static func count(where criteria: [String: Any?]) async throws -> Int {
        let query = Query<Self>().where(criteria)
        return try await requireDatabase().perform(.reading) { try query.count() }
    }

    /// Async form of ``delete(where:)``: runs on the writer thread.
    /// - Throws: as ``delete(where:)``.
    @discardableResult
    public static func delete(where criteria: [String: Any?]) async throws -> Int {
        try await Query<Self>().where(criteria).delete(permanently: false)
    }

    /// Async form of ``delete(where:permanently:)``: runs on the writer thread.
    /// - Throws: as ``ActiveRecord/delete(where:)-6fi2k``.
    @discardableResult
    public static func delete(where criteria: [String: Any?], permanently: Bool) async throws -> Int {
        let query = Query<Self>().where(criteria)
        return try await (permanently ? query.withDeleted() : query).delete(permanently: permanently)
    }

    /// Async form of ``deleteAll()``: runs on the writer thread.
    /// - Throws: as ``deleteAll()``.
    @discardableResult
    public static func deleteAll() async throws -> Int {
        try await Query<Self>().delete(permanently: false)
    }

    /// Async form of ``deleteAll(permanently:)``: runs on the writer thread.
    /// - Throws: as ``ActiveRecord/deleteAll()-5nael``.
    @discardableResult
    public static func deleteAll(permanently: Bool) async throws -> Int {
        try await (permanently ? Query<Self>().withDeleted() : Query<Self>()).delete(permanently: permanently)
    }

    /// Async form of ``fetch(sql:_:)``: runs on a reader thread (on the writer thread if the
    /// statement writes).
    /// - Throws: as ``fetch(sql:_:)``.
    public static func fetch(sql: String, _ arguments: [(any ColumnValue)?] = []) async throws -> sending [Self] {
        try await requireDatabase().perform(.reading) { try Self.fetch(sql: sql, arguments) }
    }

    /// Async form of ``fetch(sql:arguments:)``.
    /// - Throws: as ``ActiveRecord/fetch(sql:_:)-5rjk0``.
    public static func fetch(sql: String, arguments: [(any ColumnValue)?]) async throws -> sending [Self] {
        try await fetch(sql: sql, arguments)
    }
}
