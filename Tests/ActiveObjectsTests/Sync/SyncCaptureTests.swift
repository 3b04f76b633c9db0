import Foundation
import Testing
@testable import ActiveObjects

/// The same table as `SyncNote`, one version later: a `color` column.
final class SyncNoteV2: ActiveObject {
    override class var database: Database? { SyncTestDevice.database }
    override class var tableName: String { "sync_note" }
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = UUID()
    @Column var title = ""
    @Column var body = ""
    @Column var rank = 0
    @Column var score: Double? = nil
    @Column(references: SyncFolder.self, onDelete: .cascade) var folderUUID: UUID? = nil
    @Column var color = "none"
}

final class SyncTag: ActiveObject {
    override class var database: Database? { SyncTestDevice.database }
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "label" }
    @Column var label = ""
    @Column var uses = 0
}

final class UnsynchronizedThing: ActiveObject {
    override class var primaryKey: String { "code" }
    @Column var code = ""
}

final class IntegerKeyedSynchronized: ActiveObject {
    override class var isSynchronized: Bool { true }
    @Column var name = ""
}

@Suite struct SyncCaptureTests {
    @Test func everyWriterIsRecordedInTheSameTransaction() async throws {
        let world = try SyncWorld()
        let (db, engine) = try world.addDevice()
        let path = world.folder.path("device0.sqlite")
        // Another Database on the file (another connection, as another process would be).
        try synchronously {
            let other = try Database(path: path)
            try other.execute("INSERT INTO sync_note (uuid, title) VALUES ('a', 'x'), ('b', 'y')")
            try other.execute("UPDATE sync_note SET title = 'z' WHERE uuid = 'a'")
            try other.execute("UPDATE sync_note SET title = title WHERE uuid = 'b'")   // changes nothing
            try? other.transaction {
                try other.execute("DELETE FROM sync_note WHERE uuid = 'b'")
                try other.execute("INSERT INTO sync_note (uuid, title) VALUES ('c', 'rolled back')")
                throw CancellationError()
            }
            try other.close()
        }
        #expect(try engine.pendingChangeCount() == 2)
        let log = try await db.rows("SELECT pk, kind, cols FROM activeobjects_sync_log ORDER BY seq")
        #expect(log.map { "\($0.values)" } == ["[TEXT 'a', INTEGER 0, NULL]", "[TEXT 'b', INTEGER 0, NULL]", "[TEXT 'a', INTEGER 1, TEXT 'title\u{1F}']"])
        // The sqlite3 shell, when installed, is captured too: the triggers are in the file.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") {
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            shell.arguments = [path, "DELETE FROM sync_note WHERE uuid = 'a';"]
            try shell.run()
            shell.waitUntilExit()
            #expect(shell.terminationStatus == 0)
            #expect(try engine.pendingChangeCount() == 2)
            #expect(try await db.scalar("SELECT kind FROM activeobjects_sync_log ORDER BY seq DESC LIMIT 1") as Int? == 2)
        }
        let report = try await engine.synchronize()
        #expect(report.pushed == 2)
        #expect(try engine.pendingChangeCount() == 0)
    }

    @Test func rowsWrittenBeforeTheTableWasSynchronizedArePushed() async throws {
        let world = try SyncWorld()
        let db = try Database(path: world.folder.path("legacy.sqlite"))
        defer { try? db.close() }
        try synchronously {
            try db.execute("CREATE TABLE sync_folder (uuid TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL DEFAULT '')")
            try db.execute("INSERT INTO sync_folder (uuid, name) VALUES ('f1', 'old'), ('f2', 'older')")
        }
        let engine = try SyncEngine(database: db, models: [SyncFolder.self], transport: DirectTransport(hub: world.hub, user: "alice"))
        #expect(try engine.pendingChangeCount() == 2)
        // A second engine, or createTable, does not queue them again.
        _ = try SyncEngine(database: db, models: [SyncFolder.self], transport: DirectTransport(hub: world.hub, user: "alice"))
        try onDevice(db) { try SyncFolder.createTable() }
        #expect(try engine.pendingChangeCount() == 2)
        #expect(try await engine.synchronize().pushed == 2)
        #expect(try await hubDump(world.hub, SyncFolder.self, columns: ["uuid", "name"]) == ["uuid=TEXT 'f1' name=TEXT 'old'", "uuid=TEXT 'f2' name=TEXT 'older'"])
    }

    @Test func aChangedKeyIsADeleteAndAnInsert() async throws {
        let world = try SyncWorld()
        let (a, engineA) = try world.addDevice()
        let (b, engineB) = try world.addDevice()
        try await a.execute("INSERT INTO sync_note (uuid, title) VALUES ('old', 'moving')")
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        try await a.execute("UPDATE sync_note SET uuid = 'new' WHERE uuid = 'old'")
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        #expect(try await b.rows("SELECT uuid, title FROM sync_note").map { "\($0.values)" } == ["[TEXT 'new', TEXT 'moving']"])
    }

    @Test func aSynchronizedModelNeedsATextKey() throws {
        let db = try Database(path: ":memory:")
        #expect(throws: ActiveObjectError.self) { try IntegerKeyedSynchronized.createTable(in: db) }
        do {
            _ = try SyncEngine(database: db, models: [IntegerKeyedSynchronized.self],
                               transport: DirectTransport(hub: try SyncHub(database: db, models: [SyncNote.self]), user: "u"))
            Issue.record("accepted")
        } catch let ActiveObjectError.invalidModel(model, reason) {
            #expect(model == "IntegerKeyedSynchronized")
            #expect(reason.contains("UUID or String"))
        }
        #expect(throws: ActiveObjectError.self) { try SyncHub(database: db, models: [UnsynchronizedThing.self]) }
    }

    /// A device whose model lacks a column keeps the pulled values of it, and applies them when
    /// its `createTable()` adds the column; the same for a model it lacks entirely.
    @Test func schemaRolloutKeepsWhatTheOldModelCannotHold() async throws {
        let world = try SyncWorld(hubModels: [SyncFolder.self, SyncNoteV2.self, SyncTag.self])
        let (new, engineNew) = try world.addDevice(models: [SyncFolder.self, SyncNoteV2.self, SyncTag.self])
        let (old, engineOld) = try world.addDevice(models: [SyncFolder.self, SyncNote.self])
        try await new.execute("INSERT INTO sync_tag (label, uses) VALUES ('urgent', 3)")
        try await new.execute("INSERT INTO sync_note (uuid, title, color) VALUES ('n1', 'painted', 'red')")
        _ = try await engineNew.synchronize()
        #expect(try await engineOld.synchronize().pulled == 1)
        #expect(try await old.scalar("SELECT title FROM sync_note") as String? == "painted")
        // The old device edits the row it can read; its push keeps the color it cannot.
        try await old.execute("UPDATE sync_note SET title = 'edited on the old device'")
        _ = try await engineOld.synchronize()
        try await new.execute("UPDATE sync_note SET color = 'blue'")
        _ = try await engineNew.synchronize()
        _ = try await engineOld.synchronize()
        #expect(try await new.scalar("SELECT title FROM sync_note") as String? == "edited on the old device")
        // The upgrade: the old device's tables gain the column and the folder table.
        try onDevice(old) {
            try SyncNoteV2.createTable()
            try SyncTag.createTable()
        }
        #expect(try dump(old, "sync_note") == dump(new, "sync_note"))
        #expect(try await old.scalar("SELECT color FROM sync_note") as String? == "blue")
        #expect(try dump(old, "sync_tag", key: "label") == ["label=TEXT 'urgent' uses=INTEGER 3"])
        // Applying them is not a local change.
        #expect(try engineOld.pendingChangeCount() == 0)
        #expect(try await engineOld.synchronize() == SyncReport(pushed: 0, pulled: 0))
    }

    /// A folder deleted on one device while another files a note in it: foreign keys hold on
    /// every device after every apply, and all end equal.
    @Test func foreignKeysHoldWhenAParentIsDeletedConcurrently() async throws {
        let world = try SyncWorld()
        let (a, engineA) = try world.addDevice()
        let (b, engineB) = try world.addDevice()
        try await a.execute("INSERT INTO sync_folder (uuid, name) VALUES ('f', 'Work')")
        try await a.execute("INSERT INTO sync_note (uuid, title, folderUUID) VALUES ('n0', 'filed', 'f')")
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        try await a.execute("DELETE FROM sync_folder WHERE uuid = 'f'")      // cascades to n0
        try await b.execute("INSERT INTO sync_note (uuid, title, folderUUID) VALUES ('n1', 'filed meanwhile', 'f')")
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        for db in [a, b] {
            #expect(try await db.rows("PRAGMA foreign_key_check").isEmpty)
            #expect(try dump(db, "sync_note").isEmpty)
            #expect(try dump(db, "sync_folder").isEmpty)
        }
        #expect(try await world.hub.rows(of: SyncNote.self, user: "alice").isEmpty)
        #expect(try await world.hub.rows(of: SyncFolder.self, user: "alice").isEmpty)
    }

    /// A local table that references a synchronized one follows a pulled delete; a foreign key
    /// that already failed before the pull (a legacy file) is left alone.
    @Test func foreignKeyRepairsTouchOnlyWhatThePullBroke() async throws {
        let world = try SyncWorld()
        let (a, engineA) = try world.addDevice()
        let (b, engineB) = try world.addDevice()
        try await b.execute("CREATE TABLE local_pin (id INTEGER PRIMARY KEY, folder TEXT REFERENCES sync_folder(uuid))")
        try await b.execute("CREATE TABLE legacy (id INTEGER PRIMARY KEY, folder TEXT REFERENCES sync_folder(uuid))")
        try await b.execute("PRAGMA foreign_keys = OFF")
        try await b.execute("INSERT INTO legacy (id, folder) VALUES (1, 'never existed')")
        try await b.execute("PRAGMA foreign_keys = ON")
        try await a.execute("INSERT INTO sync_folder (uuid, name) VALUES ('f', 'Work')")
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        try await b.execute("INSERT INTO local_pin (id, folder) VALUES (7, 'f')")
        try await a.execute("DELETE FROM sync_folder WHERE uuid = 'f'")
        _ = try await engineA.synchronize()
        #expect(try await engineB.synchronize().pulled == 1)
        #expect(try await b.scalar("SELECT count(*) FROM local_pin") as Int? == 0)
        #expect(try await b.scalar("SELECT count(*) FROM legacy") as Int? == 1)
        #expect(try dump(b, "sync_folder").isEmpty)
    }

    @Test func aPulledChangeIsSeenByLiveQueriesAndModels() async throws {
        let world = try SyncWorld()
        let (a, engineA) = try world.addDevice()
        let (b, engineB) = try world.addDevice()
        // `values()` of a model whose database is B's: the probe runs in a task of its own.
        let probe = LiveProbe(b.values { try b.rows("SELECT title FROM sync_note ORDER BY title") },
                              map: { rows in rows.map { "\($0.values)" } })
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        #expect(probe.elements.last == [])
        try await a.execute("INSERT INTO sync_note (uuid, title) VALUES ('k', 'from a')")
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        #expect(await probe.waitUntilLast { $0 == ["[TEXT 'from a']"] })
    }

    @Test func changesSurviveAndSynchronizeResumesAfterAFailedExchange() async throws {
        struct Failing: SyncTransport {
            func exchange(_ request: Data) async throws -> Data { throw URLError(.notConnectedToInternet) }
        }
        let world = try SyncWorld()
        let (db, engine) = try world.addDevice()
        try await db.execute("INSERT INTO sync_note (uuid, title) VALUES ('k', 'offline')")
        let offline = try SyncEngine(database: db, models: [SyncFolder.self, SyncNote.self], transport: Failing())
        await #expect(throws: URLError.self) { try await offline.synchronize() }
        #expect(try offline.pendingChangeCount() == 1)
        #expect(try await engine.synchronize().pushed == 1)
        #expect(try engine.pendingChangeCount() == 0)
    }
}
