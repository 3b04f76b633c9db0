import Foundation
import Testing
@testable import ActiveObjects

// Regression tests from the second review of sync (issue 23): each reproduces a bug the review
// found, fixed since (the hub's request limit is a documented limit instead).

/// A tree of nodes: a child is deleted with its parent.
final class SecondReviewNode: ActiveObject {
    override class var database: Database? { SyncTestDevice.database }
    override class var tableName: String { "review_node" }
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = ""
    @Column var name = ""
    @Column var weight = 0
    @Column(references: SecondReviewNode.self, onDelete: .cascade) var parentID: String? = nil
}

/// A tree of nodes whose foreign key is SQLite's default (NO ACTION).
final class SecondReviewLink: ActiveObject {
    override class var database: Database? { SyncTestDevice.database }
    override class var tableName: String { "review_link" }
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = ""
    @Column var name = ""
    @Column var weight = 0
    @Column(references: SecondReviewLink.self) var parentID: String? = nil
}

/// A tree of nodes whose children are left without a parent when it is deleted (SET NULL).
final class SecondReviewPin: ActiveObject {
    override class var database: Database? { SyncTestDevice.database }
    override class var tableName: String { "review_pin" }
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = ""
    @Column var name = ""
    @Column var weight = 0
    @Column(references: SecondReviewPin.self, onDelete: .setNull) var parentID: String? = nil
}

/// A model with a column of raw values ("stored as they come", declared BLOB).
final class SecondReviewBag: ActiveObject {
    override class var database: Database? { SyncTestDevice.database }
    override class var tableName: String { "review_bag" }
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = ""
    @Column var extra: DatabaseValue = .null
}

@Suite struct SyncSecondReviewTests {
    // MARK: A. Parking a row that has children deletes (or blocks on) its children

    /// E re-parents node b under a new node s2 it creates after b's first change; its push is
    /// cut after b (batch 1). D pulls b, whose new parent it has never heard of, and parks it —
    /// by DELETE, which cascades to b's child i that D has had for long: that delete is
    /// recorded as D's own, pushed, and i is gone on every device although nobody deleted it.
    static func reparentBeforeTheParentArrives(_ table: String, _ model: ActiveObject.Type) async throws
        -> (world: SyncWorld, e: Database, d: Database, engineE: SyncEngine, engineD: SyncEngine, flaky: FlakyTransport, errors: [String]) {
        let world = try SyncWorld(hubModels: [model], function: "second-review-\(table)")
        let flaky = FlakyTransport(hub: world.hub)
        let (e, engineE) = try world.addDevice(models: [model], transport: flaky, batchSize: 1)
        let (d, engineD) = try world.addDevice(models: [model])
        try await e.execute("INSERT INTO \(table) (uuid, name) VALUES ('s1', 'shelf 1')")
        try await e.execute("INSERT INTO \(table) (uuid, name, parentID) VALUES ('b', 'box', 's1')")
        try await e.execute("INSERT INTO \(table) (uuid, name, parentID) VALUES ('i', 'item', 'b')")
        _ = try await engineE.synchronize()
        _ = try await engineD.synchronize()
        #expect(try await d.scalar("SELECT count(*) FROM \(table)") as Int? == 3, "precondition")
        try await e.execute("UPDATE \(table) SET name = 'box, renamed' WHERE uuid = 'b'")
        try await e.execute("INSERT INTO \(table) (uuid, name) VALUES ('s2', 'shelf 2')")
        try await e.execute("UPDATE \(table) SET parentID = 's2' WHERE uuid = 'b'")
        flaky.allowed.withLock { $0 = 1 }
        await #expect(throws: FlakyTransport.Down.self) { try await engineE.synchronize() }
        var errors: [String] = []
        for _ in 0..<2 {
            do { _ = try await engineD.synchronize() } catch { errors.append("\(error)") }
        }
        flaky.allowed.withLock { $0 = .max }
        for engine in [engineE, engineD, engineE, engineD] {
            do { _ = try await engine.synchronize() } catch { errors.append("\(error)") }
        }
        return (world, e, d, engineE, engineD, flaky, errors)
    }

    @Test func parkingARowWaitingForItsNewParentDoesNotCascadeToItsChildren() async throws {
        let run = try await Self.reparentBeforeTheParentArrives("review_node", SecondReviewNode.self)
        #expect(run.errors.isEmpty, "\(run.errors)")
        #expect(try await run.e.scalar("SELECT count(*) FROM review_node WHERE uuid = 'i'") as Int? == 1, "E lost item i")
        #expect(try await run.d.scalar("SELECT count(*) FROM review_node WHERE uuid = 'i'") as Int? == 1, "D lost item i")
        #expect(try dump(run.d, "review_node") == dump(run.e, "review_node"))
    }

    /// The same with `onDelete: .setNull`: the DELETE that parks b sets i's parent to NULL,
    /// recorded as D's own edit of i (later than E's), pushed: i is detached on every device.
    @Test func parkingARowWaitingForItsNewParentDoesNotDetachItsChildren() async throws {
        let run = try await Self.reparentBeforeTheParentArrives("review_pin", SecondReviewPin.self)
        #expect(run.errors.isEmpty, "\(run.errors)")
        #expect(try await run.e.scalar("SELECT parentID FROM review_pin WHERE uuid = 'i'") as String? == "b", "E's i lost its parent")
        #expect(try dump(run.d, "review_pin") == dump(run.e, "review_pin"))
    }

    // MARK: B. A chain of waiting rows deeper than the 16 rounds of repairForeignKeys

    /// E builds a chain r ← n1 ← … ← n20 and a lone node; r holds a value the hub refuses (REAL
    /// in an INTEGER column, by raw SQL), so E sets it aside and pushes the rest. D pulls the
    /// chain: each round of repairForeignKeys parks one level (the parked parent makes its
    /// child fail next), 20 levels need 20 rounds, the loop gives up after 16 and throws — and
    /// since it throws inside the apply, D applies nothing at all, not even the lone node, at
    /// every synchronize() until r is fixed on E.
    @Test func aChainOfWaitingRowsDeeperThanSixteenDoesNotStopTheApply() async throws {
        let world = try SyncWorld(hubModels: [SecondReviewLink.self])
        let (e, engineE) = try world.addDevice(models: [SecondReviewLink.self])
        let (d, engineD) = try world.addDevice(models: [SecondReviewLink.self])
        try await e.execute("INSERT INTO review_link (uuid, name) VALUES ('r', 'root')")
        var parent = "r"
        for level in 1...20 {
            try await e.execute("INSERT INTO review_link (uuid, name, parentID) VALUES (?, 'level', ?)", ["n\(level)", parent])
            parent = "n\(level)"
        }
        try await e.execute("INSERT INTO review_link (uuid, name) VALUES ('lonely', 'unrelated')")
        try await e.execute("UPDATE review_link SET weight = 2.5 WHERE uuid = 'r'")
        await #expect(throws: ActiveObjectError.self) { try await engineE.synchronize() }   // r set aside
        var errors: [String] = []
        do { _ = try await engineD.synchronize() } catch { errors.append("\(error)") }
        #expect(errors.isEmpty, "\(errors)")
        #expect(try await d.scalar("SELECT count(*) FROM review_link WHERE uuid = 'lonely'") as Int? == 1)
    }

    // MARK: C. A waiting child is inserted and parked again at every apply, and counted

    /// A child waiting for its parent is written by applyParked (foreign keys deferred, so the
    /// INSERT succeeds), counted as pulled, then parked again by repairForeignKeys: every
    /// synchronize() reports "pulled 1" although nothing arrived (and commits a write).
    @Test func aWaitingChildIsNotReportedAsPulledAtEverySynchronize() async throws {
        let world = try SyncWorld()
        let flaky = FlakyTransport(hub: world.hub)
        let (e, engineE) = try world.addDevice(transport: flaky, batchSize: 1)
        let (d, engineD) = try world.addDevice()
        try await e.execute("INSERT INTO sync_note (uuid, title) VALUES ('n', 'child')")
        try await e.execute("INSERT INTO sync_folder (uuid, name) VALUES ('f', 'parent')")
        try await e.execute("UPDATE sync_note SET folderUUID = 'f' WHERE uuid = 'n'")
        flaky.allowed.withLock { $0 = 1 }
        await #expect(throws: FlakyTransport.Down.self) { try await engineE.synchronize() }
        _ = try await engineD.synchronize()
        // n is there, its folder waiting (NULL until the folder arrives).
        #expect(try await d.scalar("SELECT count(*) FROM sync_note WHERE folderUUID IS NULL") as Int? == 1, "precondition: n's folder waits")
        let again = try await engineD.synchronize()
        #expect(again.pulled == 0, "\(again)")
    }

    // MARK: D. Raw-value (BLOB) columns refuse every value but a blob

    /// b9dbd02 made `problem(with:)` accept only blobs in a BLOB column. But a `DatabaseValue`
    /// column is declared BLOB precisely to keep values "as they come": a row whose raw value
    /// is an integer or text is now set aside on the device (and refused by the hub) forever.
    @Test func aRawValueColumnHoldingAnIntegerSynchronizes() async throws {
        let world = try SyncWorld(hubModels: [SecondReviewBag.self])
        let (db, engine) = try world.addDevice(models: [SecondReviewBag.self])
        let bag = SecondReviewBag()
        bag.uuid = "b1"
        bag.extra = .integer(42)
        try onDevice(db) { try bag.save() }
        await #expect(throws: Never.self) { try await engine.synchronize() }
        #expect(try await world.hub.rows(of: SecondReviewBag.self, user: "alice").first?["extra"] == .integer(42))
    }

    // MARK: E. Parked values of a column the hub's model dropped are pushed back, and refused

    /// Version 3 drops `score`; the hub is upgraded first (Sync.md). A device installed with
    /// v3 has no `score` column: it parks the `score` the hub still holds for old rows — then
    /// pushes it back with its next edit of such a row ("parked columns came from the hub,
    /// which knows them"). The hub refuses the whole request ("has no column score"): the
    /// device never pushes nor pulls again.
    @Test func parkedValuesOfAColumnTheHubDroppedDoNotStopTheDevice() async throws {
        let world = try SyncWorld()
        let (old, engineOld) = try world.addDevice()
        try await old.execute("INSERT INTO sync_note (uuid, title, score) VALUES ('x', 'scored', 1.5)")
        _ = try await engineOld.synchronize()
        // The hub is upgraded to v3 (same database).
        let upgradedHub = try SyncHub(database: world.hubDatabase, models: [SyncFolder.self, SyncNoteSlim.self])
        let (fresh, engineFresh) = try world.addDevice(models: [SyncFolder.self, SyncNoteSlim.self],
                                                       transport: DirectTransport(hub: upgradedHub, user: "alice"))
        _ = try await engineFresh.synchronize()
        #expect(try await fresh.scalar("SELECT title FROM sync_note WHERE uuid = 'x'") as String? == "scored", "precondition")
        try await fresh.execute("UPDATE sync_note SET title = 'edited on v3' WHERE uuid = 'x'")
        var errors: [String] = []
        do { _ = try await engineFresh.synchronize() } catch { errors.append("\(error)") }
        #expect(errors.isEmpty, "\(errors)")
        #expect(try engineFresh.pendingChangeCount() == 0)
    }

    // MARK: F. Hub identity: a restored backup keeps its identity; a new hub never gets old rows

    /// The identity lives in the hub's database, so a backup restored keeps it: devices do not
    /// reset their cursors. The restored hub numbers new changes from its old high-water mark —
    /// positions B has already passed — so B never receives z; and y, acknowledged by the hub
    /// before it was restored, is on A and B but never again on the hub (nor on a new device).
    @Test func aHubRestoredFromABackupStillDeliversEveryRow() async throws {
        let world = try SyncWorld()
        let (a, engineA) = try world.addDevice()
        let (b, engineB) = try world.addDevice()
        try await a.execute("INSERT INTO sync_note (uuid, title) VALUES ('x', 'before the backup')")
        _ = try await engineA.synchronize()
        let backup = world.folder.path("hub-backup.sqlite")
        try await world.hubDatabase.execute("VACUUM INTO '\(backup)'")
        try await a.execute("INSERT INTO sync_note (uuid, title) VALUES ('y', 'after the backup')")
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        // The server's disk dies; the backup is restored, and given a new identity (Sync.md).
        let restoredDB = try Database(path: backup)
        defer { try? restoredDB.close() }
        try await restoredDB.execute("DELETE FROM activeobjects_hub_state WHERE name = 'id'")
        let restored = try SyncHub(database: restoredDB, models: [SyncFolder.self, SyncNote.self])
        let engineA2 = try SyncEngine(database: a, models: [SyncFolder.self, SyncNote.self], transport: DirectTransport(hub: restored, user: "alice"))
        let engineB2 = try SyncEngine(database: b, models: [SyncFolder.self, SyncNote.self], transport: DirectTransport(hub: restored, user: "alice"))
        try await a.execute("INSERT INTO sync_note (uuid, title) VALUES ('z', 'after the restore')")
        for engine in [engineA2, engineB2, engineA2, engineB2] { _ = try await engine.synchronize() }
        #expect(try dump(b, "sync_note") == dump(a, "sync_note"), "B misses z")
        #expect(try await hubDump(restored, SyncNote.self, columns: ["uuid"]) == ["uuid=TEXT 'x'", "uuid=TEXT 'y'", "uuid=TEXT 'z'"])
    }

    /// A new server (a fresh hub database): devices learn its identity and pull everything
    /// again — but push nothing they had, so the hub and every device installed since never
    /// get the rows written before the move.
    @Test func aNewHubReceivesTheRowsDevicesAlreadyHad() async throws {
        let world = try SyncWorld()
        let (a, engineA) = try world.addDevice()
        try await a.execute("INSERT INTO sync_note (uuid, title) VALUES ('x', 'written before the move')")
        _ = try await engineA.synchronize()
        let newDB = try Database(path: world.folder.path("new-hub.sqlite"))
        defer { try? newDB.close() }
        let newHub = try SyncHub(database: newDB, models: [SyncFolder.self, SyncNote.self])
        let engineA2 = try SyncEngine(database: a, models: [SyncFolder.self, SyncNote.self], transport: DirectTransport(hub: newHub, user: "alice"))
        let (c, engineC) = try world.addDevice(transport: DirectTransport(hub: newHub, user: "alice"))
        for engine in [engineA2, engineC, engineA2, engineC] { _ = try await engine.synchronize() }
        #expect(try await hubDump(newHub, SyncNote.self, columns: ["uuid"]) == ["uuid=TEXT 'x'"])
        #expect(try dump(c, "sync_note") == dump(a, "sync_note"))
    }

    // MARK: G. A device whose clock once ran more than a day ahead

    /// The user set the date two days ahead (or the RTC was wrong at boot), edited a note, and
    /// the clock was corrected. The hybrid clock never goes back, so every later edit is
    /// stamped two days ahead; the hub refuses the whole request (stamp more than a day
    /// ahead), which the engine does not set aside: the device neither pushes nor pulls
    /// anything until real time catches up (a year, for a clock set a year ahead).
    @Test func aDeviceWhoseClockRanAheadStillPulls() async throws {
        let world = try SyncWorld()
        let (d, engineD) = try world.addDevice()
        let (e, engineE) = try world.addDevice()
        let ahead = SyncStamp.physicalNow() + ((2 * 86_400_000) << 16)
        try await d.execute("INSERT INTO activeobjects_sync_log (tbl, kind, stamp) VALUES ('', 3, ?)", [ahead])
        try await d.execute("INSERT INTO sync_note (uuid, title) VALUES ('mine', 'edited after the clock ran ahead')")
        try await e.execute("INSERT INTO sync_note (uuid, title) VALUES ('theirs', 'from e')")
        _ = try await engineE.synchronize()
        var errors: [String] = []
        do { _ = try await engineD.synchronize() } catch { errors.append("\(error)") }
        #expect(try await d.scalar("SELECT count(*) FROM sync_note WHERE uuid = 'theirs'") as Int? == 1, "\(errors)")
    }

    // MARK: H. A hub configured with a smaller request limit wedges a device with a backlog

}
