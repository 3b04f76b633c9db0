import ActiveObjects

/// Opening the server's database and bringing its schema up to date.
public enum TodoDatabase {
    /// The schema's history. Steps are never edited once released: a change is a new step.
    public static var migrator: Migrator {
        var migrator = Migrator()
        migrator.register("001-create-todo") { db in
            try Todo.createTable(in: db)
        }
        migrator.register("002-index-todo-updated-at") { db in
            try db.execute("CREATE INDEX IF NOT EXISTS todo_updated_at ON todo(updated_at)")
        }
        migrator.register("003-todo-dates-without-frozen-default") { db in
            try unfreezeDates(db)
        }
        return migrator
    }

    /// Opens (or creates) the database file at `path` in WAL mode, with a pool of reader
    /// connections beside the writer, and runs the migrations that have not run yet.
    ///
    /// Call it before serving requests: `Migrator.migrate(_:)` is synchronous.
    /// - Parameters:
    ///   - path: the database file.
    ///   - readers: the most reader connections open at once (reads run there, concurrently
    ///     with each other and with the writer).
    /// - Throws: `DatabaseError` when the file cannot be opened;
    ///   `ActiveObjectError.migrationFailed` naming the step that failed (nothing of it stays).
    public static func open(path: String, readers: Int = 4) throws -> Database {
        var options = Database.Options()
        options.journalMode = .wal
        options.maximumReaderCount = readers
        options.busyTimeout = .seconds(5)
        let db = try Database(path: path, options: options)
        try migrator.migrate(db)
        return db
    }

    /// Step 003: the first versions of the example declared `createdAt` and `updatedAt` as plain
    /// columns starting at `Date()`, and the library of the time wrote the date the table was
    /// created into the table as their SQL `DEFAULT` (a row inserted by another tool got that
    /// date). The dates are now `@Column(role:)`s the library stamps; rebuilding the table drops
    /// the frozen defaults and keeps every row, every value and the indexes. A table created
    /// by this version is left as it is.
    static func unfreezeDates(_ db: Database) throws {
        try Todo.migrate(in: db, rebuildingTable: true)
    }
}
