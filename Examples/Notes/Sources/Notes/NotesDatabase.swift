import ActiveObjects

/// Opening the notes database and bringing its schema up to date.
public enum NotesDatabase {
    /// The schema's history. Steps are never edited once released: a change is a new step.
    public static var migrator: Migrator {
        var migrator = Migrator()
        migrator.register("001-create-note") { db in
            try Note.createTable(in: db)
        }
        return migrator
    }

    /// Opens (or creates) the notes file at `path` — WAL mode, so the live results' reads run
    /// beside the app's writes — runs the migrations that have not run yet, and makes it the
    /// database of the models (`ActiveObject.defaultDatabase`).
    ///
    /// Call it once at launch, before the first view appears.
    /// - Throws: `DatabaseError` when the file cannot be opened;
    ///   `ActiveObjectError.migrationFailed` naming the step that failed (nothing of it stays).
    @discardableResult
    public static func open(path: String) throws -> Database {
        let db = try Database(path: path)
        try migrator.migrate(db)
        ActiveObject.defaultDatabase = db
        return db
    }
}
