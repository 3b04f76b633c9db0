import Foundation
import Testing
@testable import ActiveObjects

@Suite struct SyncEngineTests {
    @Test func aNoteMadeOnOneDeviceReachesTheOther() async throws {
        let world = try SyncWorld()
        let (a, engineA) = try world.addDevice()
        let (b, engineB) = try world.addDevice()
        let note = SyncNote()
        note.title = "Groceries"
        note.rank = 3
        try onDevice(a) { try note.save() }
        #expect(try engineA.pendingChangeCount() == 1)
        let pushed = try await engineA.synchronize()
        #expect(pushed.pushed == 1)
        #expect(try engineA.pendingChangeCount() == 0)
        let pulled = try await engineB.synchronize()
        #expect(pulled.pulled == 1)
        let copy = try onDevice(b) { try SyncNote.find(key: note.uuid) }
        #expect(copy?.title == "Groceries")
        #expect(copy?.rank == 3)
        #expect(try dump(a, "sync_note") == dump(b, "sync_note"))
    }

    @Test func editsToDifferentColumnsBothSurvive() async throws {
        let world = try SyncWorld()
        let (a, engineA) = try world.addDevice()
        let (b, engineB) = try world.addDevice()
        let note = SyncNote()
        note.title = "t"
        try onDevice(a) { try note.save() }
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        try await a.execute("UPDATE sync_note SET title = 'from a'")
        try await b.execute("UPDATE sync_note SET body = 'from b'")
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        _ = try await engineA.synchronize()
        let (dumpA, dumpB) = (try dump(a, "sync_note"), try dump(b, "sync_note"))
        #expect(dumpA == dumpB, "\(dumpA) \(dumpB)")
        let row = try await a.rows("SELECT title, body FROM sync_note")[0]
        #expect(try row["title"] as String == "from a")
        #expect(try row["body"] as String == "from b")
    }

    @Test func theLaterEditOfAColumnWinsAndADeleteWinsOverUpdates() async throws {
        let world = try SyncWorld()
        let (a, engineA) = try world.addDevice()
        let (b, engineB) = try world.addDevice()
        try await a.execute("INSERT INTO sync_note (uuid, title) VALUES ('k1', 'first'), ('k2', 'second')")
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        try await a.execute("UPDATE sync_note SET title = 'a' WHERE uuid = 'k1'")
        try await Task.sleep(for: .milliseconds(5))
        try await b.execute("UPDATE sync_note SET title = 'b' WHERE uuid = 'k1'")
        // k2: deleted on b, updated later on a: the delete wins.
        try await b.execute("DELETE FROM sync_note WHERE uuid = 'k2'")
        try await Task.sleep(for: .milliseconds(5))
        try await a.execute("UPDATE sync_note SET title = 'edited after the delete' WHERE uuid = 'k2'")
        _ = try await engineB.synchronize()
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        #expect(try dump(a, "sync_note") == dump(b, "sync_note"))
        #expect(try await a.rows("SELECT title FROM sync_note").map { try $0["title"] as String } == ["b"])
        let hub = try await hubDump(world.hub, SyncNote.self, columns: ["uuid", "title"])
        #expect(hub == ["uuid=TEXT 'k1' title=TEXT 'b'"])
    }
}
