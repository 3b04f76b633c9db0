import ActiveObjects
import Foundation
import Testing
import TodoAPI

/// A database file in the system's temporary folder, removed (with its WAL files) by `remove()`.
struct TemporaryTodoFile {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("todo-tests-\(UUID().uuidString).sqlite").path

    func remove() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// The todo's dates are `@Column(role: .createdAt)` / `.updatedAt`: stamped by the library, as
/// the server's JSON shows them; a file made by an earlier version gets its table fixed.
/// Serialized: the models use `ActiveObject.defaultDatabase`, as in the server.
@Suite(.serialized) struct TodoTimestampTests {
    private func isNow(_ date: Date, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(abs(date.timeIntervalSinceNow) < 10, "\(what): \(date) is not now", sourceLocation: sourceLocation)
    }

    /// The SQL `DEFAULT` of each column of `todo`.
    private func defaults(_ db: Database) throws -> [String: String?] {
        var result: [String: String?] = [:]
        for row in try db.rows("SELECT name, dflt_value FROM pragma_table_info('todo')") {
            result[try row["name"] as String] = try row["dflt_value"] as String?
        }
        return result
    }

    /// Every value of every row, as SQL literals (so that a changed type shows).
    private static func quotedRows(_ db: Database) throws -> [[String]] {
        try db.rows("SELECT quote(id), quote(title), quote(done), quote(created_at), quote(updated_at) FROM todo ORDER BY id")
            .map { row in try (0..<5).map { try row[$0] as String } }
    }

    @Test func aNewTodoIsStampedAndAChangeMovesUpdatedAt() throws {
        let file = TemporaryTodoFile()
        defer { file.remove() }
        let db = try TodoDatabase.open(path: file.path, readers: 1)
        defer { try? db.close() }
        ActiveObject.defaultDatabase = db
        defer { ActiveObject.defaultDatabase = nil }

        let todo = Todo()
        todo.title = "Buy milk"
        try todo.save()
        let id = try #require(todo.id)
        isNow(todo.createdAt, "createdAt")
        #expect(todo.updatedAt == todo.createdAt, "one moment for both stamps of an insert")

        // The answer to POST shows what a later GET shows.
        let posted = try TodoResponse(todo)
        let fetched = try #require(try Todo.find(id: id))
        #expect(try TodoResponse(fetched) == posted)

        // A save that changes nothing (a PATCH with the same values) leaves updatedAt.
        fetched.done = false
        try fetched.save()
        #expect(try TodoResponse(try #require(try Todo.find(id: id))).updatedAt == posted.updatedAt)

        // A change moves updatedAt, never createdAt.
        Thread.sleep(forTimeInterval: 0.01)
        fetched.done = true
        try fetched.save()
        #expect(fetched.createdAt == todo.createdAt)
        #expect(fetched.updatedAt > todo.updatedAt)
        let patched = try TodoResponse(fetched)
        #expect(patched.createdAt == posted.createdAt && patched.updatedAt != posted.updatedAt)
        #expect(try TodoResponse(try #require(try Todo.find(id: id))) == patched)

        // No date is frozen into the table: another tool's insert does not get the table's creation date.
        for column in ["created_at", "updated_at"] {
            let value = try defaults(db)[column] ?? nil
            #expect(value == nil, "\(column) DEFAULT \(value ?? "")")
        }
    }

    @Test func aFileOfAnEarlierVersionLosesItsFrozenDatesAndKeepsItsRows() throws {
        let file = TemporaryTodoFile()
        defer { file.remove() }
        // The table as the earlier versions of the example made it: the date the table was
        // created frozen into both date columns, and its first two migrations recorded.
        let old = try Database(path: file.path)
        try old.execute("""
            CREATE TABLE IF NOT EXISTS "todo" ("id" INTEGER PRIMARY KEY, "title" TEXT NOT NULL DEFAULT '', \
            "done" INTEGER NOT NULL DEFAULT 0, "created_at" TEXT NOT NULL DEFAULT '2026-11-25 09:41:07.123', \
            "updated_at" TEXT NOT NULL DEFAULT '2026-11-25 09:41:07.123')
            """)
        try old.execute(#"CREATE INDEX IF NOT EXISTS "todo_done_index" ON "todo"("done")"#)
        try old.execute("CREATE INDEX IF NOT EXISTS todo_updated_at ON todo(updated_at)")
        try old.execute("""
            INSERT INTO todo (title, done, created_at, updated_at)
            VALUES ('Buy milk', 1, '2027-01-02 03:04:05.678', '2027-01-03 03:04:05.678')
            """)
        try old.execute("INSERT INTO todo (title) VALUES ('Inserted by another tool')")
        var earlier = Migrator()
        earlier.register("001-create-todo") { _ in }
        earlier.register("002-index-todo-updated-at") { _ in }
        try earlier.migrate(old)
        let before = try Self.quotedRows(old)
        try old.close()

        let db = try TodoDatabase.open(path: file.path, readers: 1)
        defer { try? db.close() }
        #expect(try TodoDatabase.migrator.appliedMigrations(db)
                == ["001-create-todo", "002-index-todo-updated-at", "003-todo-dates-without-frozen-default"])
        for column in ["created_at", "updated_at"] {
            let value = try defaults(db)[column] ?? nil
            #expect(value == nil, "\(column) still has DEFAULT \(value ?? "")")
        }
        // Every row and value kept, the indexes too.
        #expect(try Self.quotedRows(db) == before)
        let indexes = try db.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'todo'").map { try $0["name"] as String }
        #expect(Set(indexes).isSuperset(of: ["todo_done_index", "todo_updated_at"]))

        // The fixed table works as the server's: a new todo is stamped now.
        ActiveObject.defaultDatabase = db
        defer { ActiveObject.defaultDatabase = nil }
        let todo = Todo()
        todo.title = "After the upgrade"
        try todo.save()
        isNow(todo.createdAt, "createdAt")
        let kept = try #require(try Todo.find(id: 1))
        #expect(abs(kept.createdAt.timeIntervalSince1970 - 1_798_859_045.678) < 0.001, "2027-01-02 03:04:05.678 UTC")
        #expect(try Todo.countAll() == 3)

        // Opening it again changes nothing.
        try db.close()
        let again = try TodoDatabase.open(path: file.path, readers: 1)
        defer { try? again.close() }
        #expect(try again.scalar("SELECT count(*) FROM todo") as Int? == 3)
    }
}
