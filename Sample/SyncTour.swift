import ActiveObjects
import Foundation

/// A synchronized model: a UUID key, and `isSynchronized`. Each device of the tour has its own
/// database, so the class names none: every call below passes the database or runs in one.
final class SharedNote: ActiveObject {
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = UUID()
    @Column var title = ""
    @Column var done = false
}

/// The tour's network: requests go straight to the hub, as user "alice". A server would
/// authenticate the user and pass the request body the same way.
struct InProcessTransport: SyncTransport {
    let hub: SyncHub
    func exchange(_ request: Data) async throws -> Data {
        try await hub.handle(request: request, user: "alice")
    }
}

func runSyncTour() async throws {
    section("Sync between devices, through a hub")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ActiveObjectsSyncTour-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let hub = try SyncHub(database: try Database(path: folder.appendingPathComponent("hub.sqlite").path),
                          models: [SharedNote.self])
    var devices: [(name: String, db: Database, engine: SyncEngine)] = []
    for name in ["phone", "laptop"] {
        let db = try Database(path: folder.appendingPathComponent("\(name).sqlite").path)
        try SharedNote.createTable(in: db)                 // the table, and its change capture
        let engine = try SyncEngine(database: db, models: [SharedNote.self], transport: InProcessTransport(hub: hub))
        devices.append((name, db, engine))
    }
    let (phone, laptop) = (devices[0], devices[1])

    try await phone.db.execute("INSERT INTO shared_note (uuid, title, done) VALUES ('n1', 'Buy milk', 0)")
    print("phone pending:", try phone.engine.pendingChangeCount())
    print("phone:", try await phone.engine.synchronize(), "| laptop:", try await laptop.engine.synchronize())

    // Offline, both edit the note: different columns both survive.
    try await phone.db.execute("UPDATE shared_note SET title = 'Buy oat milk' WHERE uuid = 'n1'")
    try await laptop.db.execute("UPDATE shared_note SET done = 1 WHERE uuid = 'n1'")
    for _ in 0..<2 {
        for device in devices { _ = try await device.engine.synchronize() }
    }
    for device in devices {
        let row = try await device.db.rows("SELECT title, done FROM shared_note")[0]
        print("\(device.name):", try row["title"] as String, "done:", try row["done"] as Bool)
    }
    for device in devices { try device.db.close() }
    try hub.database.close()
}
