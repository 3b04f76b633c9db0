import Foundation
import Testing
@testable import ActiveObjects

/// The database the synchronized test models use: each device's, set with `onDevice`.
enum SyncTestDevice {
    @TaskLocal static var database: Database?
}

/// Runs `body` with the models writing to `device`.
func onDevice<T>(_ device: Database, _ body: () throws -> T) rethrows -> T {
    try SyncTestDevice.$database.withValue(device) { try body() }
}

final class SyncNote: ActiveObject {
    override class var database: Database? { SyncTestDevice.database }
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = UUID()
    @Column var title = ""
    @Column var body = ""
    @Column var rank = 0
    @Column var score: Double? = nil
    @Column(references: SyncFolder.self, onDelete: .cascade) var folderUUID: UUID? = nil
}

final class SyncFolder: ActiveObject {
    override class var database: Database? { SyncTestDevice.database }
    override class var isSynchronized: Bool { true }
    override class var primaryKey: String { "uuid" }
    @Column var uuid = UUID()
    @Column var name = ""
}

/// A transport that hands requests straight to a hub, as `user`.
struct DirectTransport: SyncTransport {
    let hub: SyncHub
    let user: String
    func exchange(_ request: Data) async throws -> Data {
        try await hub.handle(request: request, user: user)
    }
}

/// A hub and devices on file databases (WAL, readers: the defaults) in one temporary folder.
final class SyncWorld {
    let folder: TemporaryDirectory
    let hubDatabase: Database
    let hub: SyncHub
    private(set) var devices: [Database] = []
    private(set) var engines: [SyncEngine] = []

    init(hubModels: [ActiveObject.Type] = [SyncFolder.self, SyncNote.self], function: String = #function) throws {
        folder = try TemporaryDirectory(function)
        hubDatabase = try Database(path: folder.path("hub.sqlite"))
        hub = try SyncHub(database: hubDatabase, models: hubModels)
    }

    /// A new device of `user`, its tables created, with an engine over `transport` (direct by default).
    @discardableResult
    func addDevice(user: String = "alice", models: [ActiveObject.Type] = [SyncFolder.self, SyncNote.self],
                   transport: (any SyncTransport)? = nil, batchSize: Int = 500) throws -> (Database, SyncEngine) {
        let db = try Database(path: folder.path("device\(devices.count).sqlite"))
        try onDevice(db) {
            for model in models { try createTable(model, in: db) }
        }
        let engine = try SyncEngine(database: db, models: models,
                                    transport: transport ?? DirectTransport(hub: hub, user: user), batchSize: batchSize)
        devices.append(db)
        engines.append(engine)
        return (db, engine)
    }

    deinit {
        for device in devices { try? device.close() }
        try? hubDatabase.close()
    }
}

/// `createTable(in:)` of a model given as a metatype.
func createTable(_ model: ActiveObject.Type, in database: Database) throws {
    func open<T: ActiveObject>(_ type: T.Type) throws { try type.createTable(in: database) }
    try open(model)
}

/// A table's rows as text, ordered by key: what "two devices are equal" compares.
func dump(_ db: Database, _ table: String, key: String = "uuid") throws -> [String] {
    try db.rows("SELECT * FROM \(table) ORDER BY \(key)").map { row in
        zip(row.columnNames, row.values).map { "\($0)=\($1)" }.joined(separator: " ")
    }
}

/// The hub's rows of a model for `user`, as text in the same shape as `dump`.
func hubDump(_ hub: SyncHub, _ model: ActiveObject.Type, user: String = "alice", columns: [String]) async throws -> [String] {
    try await hub.rows(of: model, user: user).map { row in
        columns.map { "\($0)=\(row[$0] ?? .null)" }.joined(separator: " ")
    }
}
