import ActiveObjects
import Foundation
import Testing
@testable import Notes

/// A transport to a hub in this process, as the user `user`: what a server does for a request
/// whose token authenticates that user (Examples/SyncServer does it over HTTP).
struct HubTransport: SyncTransport {
    let hub: SyncHub
    let user: String

    func exchange(_ request: Data) async throws -> Data {
        try await hub.handle(request: request, user: user)
    }
}

/// A transport whose server cannot be reached.
struct UnreachableTransport: SyncTransport {
    func exchange(_ request: Data) async throws -> Data {
        throw URLError(.notConnectedToInternet)
    }
}

/// Two devices of one user, synchronized through a hub: this one (the default database, a
/// window following its notes) and another (a second notes file, written with SQL: the models
/// live in the default database). Part of ``NotesViewModelTests`` (serialized: one default
/// database).
extension NotesViewModelTests {
    /// A hub in memory, accepting the notes.
    func makeHub() throws -> SyncHub {
        try SyncHub(database: try Database.inMemory(), models: NotesDatabase.synchronizedModels)
    }

    /// The other device's notes file, migrated like this one; close it and remove `file`.
    func openOtherDevice() throws -> (file: TemporaryNotesFile, database: Database) {
        let file = TemporaryNotesFile()
        let database = try Database(path: file.path)
        try NotesDatabase.migrator.migrate(database)
        return (file, database)
    }

    @Test func aNoteWrittenOnOneDeviceAppearsInTheOthersLiveResults() async throws {
        let hub = try makeHub()
        let window = NotesViewModel(syncEngine: try NotesDatabase.syncEngine(database: db, transport: HubTransport(hub: hub, user: "alice")))
        try await startObserving(window)
        let (otherFile, other) = try openOtherDevice()
        defer {
            try? other.close()
            otherFile.remove()
        }
        let otherEngine = try NotesDatabase.syncEngine(database: other, transport: HubTransport(hub: hub, user: "alice"))

        // Written on the other device, synchronized there, then here: the window shows it.
        let uuid = UUID()
        try await other.execute(
            "INSERT INTO note (uuid, title, body, pinned, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
            [uuid, "Written on the phone", "", false, Date(), Date()])
        #expect(try otherEngine.pendingChangeCount() == 1)
        #expect(try await otherEngine.synchronize() == SyncReport(pushed: 1, pulled: 0))
        #expect(try otherEngine.pendingChangeCount() == 0)
        let report = try #require(await window.synchronize())
        #expect(report == SyncReport(pushed: 0, pulled: 1) && window.lastSync == report)
        #expect(window.errorMessage == nil && !window.isSynchronizing)
        try await waitUntil("the pulled note in the window") { window.notes.map(\.title) == ["Written on the phone"] }
        let shown = window.notes[0]
        #expect(shown.uuid == uuid)

        // Edited on the other device: the same object is updated in place.
        try await other.execute("UPDATE note SET body = ? WHERE uuid = ?", ["edited on the phone", uuid])
        _ = try await otherEngine.synchronize()
        #expect(await window.synchronize() == SyncReport(pushed: 0, pulled: 1))
        try await waitUntil("the pulled edit") { shown.body == "edited on the phone" }
        #expect(window.notes.count == 1 && window.notes[0] === shown)

        // Added in the window: it reaches the other device.
        let added = try await window.add(title: "Written on the laptop", body: "with a body")
        #expect(await window.synchronize() == SyncReport(pushed: 1, pulled: 0))
        #expect(try await otherEngine.synchronize() == SyncReport(pushed: 0, pulled: 1))
        let rows = try await other.rows("SELECT title, body FROM note WHERE uuid = ?", [added.uuid])
        #expect(rows.count == 1)
        #expect(try rows.first.map { try $0["title"] as String } == "Written on the laptop")

        // Deleted on the other device: it leaves the window.
        try await other.execute("DELETE FROM note WHERE uuid = ?", [uuid])
        _ = try await otherEngine.synchronize()
        #expect(await window.synchronize() == SyncReport(pushed: 0, pulled: 1))
        try await waitUntil("the note deleted on the phone gone") { window.notes.map(\.title) == ["Written on the laptop"] }

        // The hub holds what both devices hold, for alice only.
        #expect(try await hub.rows(of: Note.self, user: "alice").map { $0["title"] } == [.text("Written on the laptop")])
        #expect(try await hub.rows(of: Note.self, user: "bob").isEmpty)
    }

    @Test func concurrentEditsOfOneNoteMergeFieldByField() async throws {
        let hub = try makeHub()
        let window = NotesViewModel(syncEngine: try NotesDatabase.syncEngine(database: db, transport: HubTransport(hub: hub, user: "alice")))
        try await startObserving(window)
        let (otherFile, other) = try openOtherDevice()
        defer {
            try? other.close()
            otherFile.remove()
        }
        let otherEngine = try NotesDatabase.syncEngine(database: other, transport: HubTransport(hub: hub, user: "alice"))
        let note = try await window.add(title: "Shared", body: "first draft")
        await window.synchronize()
        _ = try await otherEngine.synchronize()
        try await waitUntil("the note") { window.notes.count == 1 }
        let shown = window.notes[0]

        // Both devices edit the note before either synchronizes: the title here, the body there.
        try await window.update(shown, title: "Shared, renamed here", body: "first draft")
        try await other.execute("UPDATE note SET body = ? WHERE uuid = ?", ["rewritten on the phone", note.uuid])
        await window.synchronize()
        _ = try await otherEngine.synchronize()
        await window.synchronize()

        try await waitUntil("both edits in the window") {
            shown.title == "Shared, renamed here" && shown.body == "rewritten on the phone"
        }
        let rows = try await other.rows("SELECT title, body FROM note")
        #expect(try rows.map { [try $0["title"] as String, try $0["body"] as String] } == [["Shared, renamed here", "rewritten on the phone"]])
        let count = try await db.rows("SELECT count(*) AS n FROM note")
        #expect(try count.first.map { try $0["n"] as Int } == 1)
    }

    @Test func aFailedSynchronizationIsShownAndLosesNothing() async throws {
        let engine = try NotesDatabase.syncEngine(database: db, transport: UnreachableTransport())
        let window = NotesViewModel(syncEngine: engine)
        try await window.add(title: "Written offline")

        #expect(await window.synchronize() == nil)

        let message = try #require(window.errorMessage)
        #expect(message.hasPrefix("Synchronization failed:"))
        #expect(!window.isSynchronizing && window.lastSync == nil)
        #expect(try engine.pendingChangeCount() == 1, "the note waits for the next synchronization")
    }

    @Test func withoutAnEngineSynchronizeDoesNothing() async throws {
        #expect(await model.synchronize() == nil)
        #expect(model.errorMessage == nil && model.syncEngine == nil)
    }
}

/// Step 002 of the migrations, on a file an earlier version made (notes keyed by an integer).
struct NotesMigrationTests {
    @Test func notesKeyedByIntegersGetAUUIDKeyAndKeepTheirValues() throws {
        let file = TemporaryNotesFile()
        defer { file.remove() }
        let db = try Database(path: file.path)
        defer { try? db.close() }
        // The table as version 1 of the example made it, and its first migration recorded.
        try db.execute("""
            CREATE TABLE note (id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', body TEXT NOT NULL DEFAULT '',
                               pinned INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)
            """)
        try db.execute("CREATE INDEX note_updated_at ON note (updated_at)")
        let created = Date(timeIntervalSince1970: 1_700_000_000)
        try db.execute("INSERT INTO note (title, body, pinned, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                       ["first", "body one", true, created, created])
        try db.execute("INSERT INTO note (title, body, pinned, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                       ["second", "", false, created, created.addingTimeInterval(60)])
        var first = Migrator()
        first.register("001-create-note") { _ in }
        try first.migrate(db)

        try NotesDatabase.migrator.migrate(db)

        #expect(try NotesDatabase.migrator.appliedMigrations(db) == ["001-create-note", "002-synchronized-note"])
        let rows = try db.rows("SELECT uuid, title, body, pinned, created_at, updated_at FROM note ORDER BY title")
        #expect(try rows.map { try $0["title"] as String } == ["first", "second"])
        #expect(try rows.map { try $0["body"] as String } == ["body one", ""])
        #expect(try rows.map { try $0["pinned"] as Bool } == [true, false])
        #expect(try rows.map { try $0["updated_at"] as Date } == [created, created.addingTimeInterval(60)])
        let uuids = try rows.map { try $0["uuid"] as String }
        #expect(Set(uuids).count == 2)
        for uuid in uuids {
            #expect(UUID(uuidString: uuid) != nil && uuid == uuid.lowercased(), "\(uuid) is a UUID in ActiveObjects' form")
        }
        #expect(try db.rows("SELECT name FROM sqlite_master WHERE name = 'note_before_sync'").isEmpty)
        // The synchronized table works as the model's: a sync engine takes the notes as inserted.
        let engine = try NotesDatabase.syncEngine(database: db, transport: UnreachableTransport())
        #expect(try engine.pendingChangeCount() == 2)
    }

    @Test func aNewFileIsCreatedWithTheUUIDKey() throws {
        let file = TemporaryNotesFile()
        defer { file.remove() }
        let db = try Database(path: file.path)
        defer { try? db.close() }
        try NotesDatabase.migrator.migrate(db)
        let key = try db.rows("SELECT name FROM pragma_table_info('note') WHERE pk = 1").map { try $0["name"] as String }
        #expect(key == ["uuid"])
    }
}
