import ActiveObjects
import Foundation

/// Opening the notes database, bringing its schema up to date, and synchronizing it with a
/// server.
public enum NotesDatabase {
    /// The schema's history. Steps are never edited once released: a change is a new step.
    public static var migrator: Migrator {
        var migrator = Migrator()
        migrator.register("001-create-note") { db in
            try Note.createTable(in: db)
        }
        migrator.register("002-synchronized-note") { db in
            try rekeyNotesByUUID(db)
        }
        return migrator
    }

    /// The models a `SyncEngine` of the notes database synchronizes, and a `SyncHub` serving
    /// notes devices accepts.
    public static var synchronizedModels: [ActiveObject.Type] { [Note.self] }

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

    /// A sync engine for the notes of `database` (opened by ``open(path:)``), exchanging with
    /// the sync server at `serverURL` (its `/sync` endpoint, e.g. `Examples/SyncServer`) as the
    /// user whose bearer token is `token`. Give it to ``NotesViewModel/init(syncEngine:)``.
    ///
    /// ```swift
    /// let db = try NotesDatabase.open(path: path)
    /// let engine = try NotesDatabase.syncEngine(database: db, serverURL: URL(string: "https://sync.example.com/sync")!, token: token)
    /// let model = NotesViewModel(syncEngine: engine)
    /// ```
    ///
    /// Creating it installs the change capture (once per file); notes the file already held
    /// are pushed by the first synchronization.
    /// - Throws: `DatabaseError` when the change capture cannot be installed.
    public static func syncEngine(database: Database, serverURL: URL, token: String) throws -> SyncEngine {
        try syncEngine(database: database, transport: HTTPSyncTransport(url: serverURL, token: token))
    }

    /// A sync engine for the notes of `database` over any transport (an in-process hub in tests).
    /// - Throws: `DatabaseError` when the change capture cannot be installed.
    public static func syncEngine(database: Database, transport: any SyncTransport) throws -> SyncEngine {
        try SyncEngine(database: database, models: synchronizedModels, transport: transport)
    }

    /// Step 002: notes were keyed by an integer rowid before they were synchronized; a
    /// synchronized model needs a key every device can make alone. A file created by an earlier
    /// version gets its table rebuilt with a `uuid` key, a new random UUID per note, every other
    /// value kept. A file whose step 001 already created the `uuid` key is left as it is.
    static func rekeyNotesByUUID(_ db: Database) throws {
        let columns = try db.rows("PRAGMA table_info(note)").map { row -> String in try row["name"] }
        guard !columns.contains("uuid") else { return }
        // The old table's indexes keep their names when it is renamed: drop them first, so that
        // createTable() makes them again on the new table.
        let indexes = try db.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'note' AND sql IS NOT NULL")
        for index in indexes {
            let name: String = try index["name"]
            try db.execute("DROP INDEX \"\(name.replacingOccurrences(of: "\"", with: "\"\""))\"")
        }
        try db.execute("ALTER TABLE note RENAME TO note_before_sync")
        try Note.createTable(in: db)
        // A version 4 UUID in the lowercase text form ActiveObjects stores, one per row.
        let randomUUID = """
            lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) \
            || '-' || substr('89ab', 1 + abs(random() % 4), 1) || substr(lower(hex(randomblob(2))), 2) \
            || '-' || lower(hex(randomblob(6)))
            """
        try db.execute("""
            INSERT INTO note (uuid, title, body, pinned, created_at, updated_at)
            SELECT \(randomUUID), title, body, pinned, created_at, updated_at FROM note_before_sync ORDER BY id
            """)
        try db.execute("DROP TABLE note_before_sync")
    }
}
