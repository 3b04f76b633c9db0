import Foundation

/// The server side of synchronization: stores each user's synchronized rows, merges what
/// devices push, and gives each device the changes it has not seen (§18).
///
/// The hub is not an HTTP server: host it in any framework, authenticate the request, and pass
/// the body and the authenticated user:
///
/// ```swift
/// let hub = try SyncHub(database: serverDB, models: [Note.self, Folder.self])
/// // in a POST /sync handler, after checking the bearer token:
/// let reply: Data = try await hub.handle(request: body, user: authenticatedUserID)
/// ```
///
/// The hub owns its database and creates its own tables there (`activeobjects_hub_*`): one row
/// per synchronized row and user, and one per field with its value and the stamp of the edit
/// that wrote it. It does not need the models' tables: it accepts the models it was given —
/// and older versions of them, which send fewer columns — and refuses anything else.
/// See <doc:Sync>.
public final class SyncHub: Sendable {
    /// The hub's database.
    public let database: Database
    /// The largest request ``handle(request:user:)`` accepts, in bytes.
    public let maximumRequestSize: Int
    /// The most rows one reply brings (a request is bounded by ``maximumRequestSize``).
    public let maximumBatchSize: Int

    /// What the hub accepts of each model, by table name.
    private let models: [String: SyncModel]

    static let rowsTable = "activeobjects_hub_rows"
    static let fieldsTable = "activeobjects_hub_fields"
    static let devicesTable = "activeobjects_hub_devices"
    static let usersTable = "activeobjects_hub_users"
    static let stateTable = "activeobjects_hub_state"

    /// The hub's identity, made with its database: a device that moves to another hub (or to
    /// this one restored from a backup) learns it and pulls everything again.
    private let hubID: String
    /// The columns each model declares, by table.
    private let declaredColumns: [String: Set<String>]

    /// Creates a hub storing its data in `database` and accepting `models`; creates its tables
    /// there when missing.
    ///
    /// - Parameters:
    ///   - database: the hub's own database (the models' tables are not needed there).
    ///   - models: the synchronized models the hub accepts (older versions of them too).
    ///   - maximumRequestSize: requests larger than this many bytes are refused (default 8 MiB).
    ///   - maximumBatchSize: the most rows a reply brings (default 1,000).
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` for a model that is not
    ///   ``ActiveObject/isSynchronized`` or has no UUID or String key, or two models of one
    ///   table; ``ActiveObjectError/invalidArgument(_:)`` for no model or a limit below 1;
    ///   ``DatabaseError`` from creating the tables.
    public init(database: Database, models: [ActiveObject.Type],
                maximumRequestSize: Int = 8 << 20, maximumBatchSize: Int = 1000) throws {
        guard !models.isEmpty else { throw ActiveObjectError.invalidArgument("SyncHub needs at least one model") }
        guard maximumRequestSize >= 1, maximumBatchSize >= 1 else {
            throw ActiveObjectError.invalidArgument("the hub's limits must be at least 1")
        }
        self.database = database
        self.maximumRequestSize = maximumRequestSize
        self.maximumBatchSize = maximumBatchSize
        var accepted: [String: SyncModel] = [:]
        for model in models {
            let checked = try SyncModel(model, in: database)
            guard accepted[checked.table] == nil else {
                throw ActiveObjectError.invalidModel(model: checked.name, reason: "another model of the hub has the table \(checked.table)")
            }
            accepted[checked.table] = checked
        }
        self.models = accepted
        declaredColumns = accepted.mapValues { Set($0.columns.keys) }
        try database.transaction {
            // Fields are keyed by the row's number, given in order of arrival: a push's new rows
            // append to the fields' tree instead of landing all over it (keys are random UUIDs).
            try database.execute("""
                CREATE TABLE IF NOT EXISTS \(Self.rowsTable) (
                    id INTEGER PRIMARY KEY, user TEXT NOT NULL, tbl TEXT NOT NULL, pk NOT NULL,
                    seq INTEGER NOT NULL, origin INTEGER NOT NULL, other_seq INTEGER NOT NULL,
                    UNIQUE (user, tbl, pk))
                """)
            try database.execute("CREATE INDEX IF NOT EXISTS activeobjects_hub_rows_by_seq ON \(Self.rowsTable) (user, seq)")
            try database.execute("""
                CREATE TABLE IF NOT EXISTS \(Self.fieldsTable) (
                    row INTEGER NOT NULL, col TEXT NOT NULL, value, hlc INTEGER NOT NULL, node INTEGER NOT NULL,
                    PRIMARY KEY (row, col)) WITHOUT ROWID
                """)
            try database.execute("""
                CREATE TABLE IF NOT EXISTS \(Self.devicesTable) (device INTEGER PRIMARY KEY, user TEXT NOT NULL)
                """)
            // Each user's last position: positions are never given twice, even once the rows
            // that had the last ones are removed.
            try database.execute("""
                CREATE TABLE IF NOT EXISTS \(Self.usersTable) (user TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID
                """)
            try database.execute("""
                CREATE TABLE IF NOT EXISTS \(Self.stateTable) (name TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID
                """)
            try database.execute("INSERT OR IGNORE INTO \(Self.stateTable) (name, value) VALUES ('id', ?)", [UUID().uuidString])
        }
        guard let id: String = try database.scalar("SELECT value FROM \(Self.stateTable) WHERE name = 'id'") else {
            throw ActiveObjectError.misuse("the hub's database has no identity")
        }
        hubID = id
    }

    /// Handles one request of a device of `user`: checks all of it, merges the rows it pushes
    /// and returns the reply — the rows changed since the device's cursor, other than by this
    /// device. Everything runs in one transaction on the hub database's writer queue.
    ///
    /// A request applied twice (its reply lost, the device sending it again) changes nothing
    /// the second time: every field keeps the value with the later stamp.
    ///
    /// - Parameters:
    ///   - request: the body the device's transport sent.
    ///   - user: the user the server authenticated (never a value read from the request).
    /// - Returns: the reply to send back as the response body.
    /// - Throws: ``ActiveObjectError/syncRefused(reason:)`` — nothing applied — for a request
    ///   larger than ``maximumRequestSize``, one that cannot be parsed, of another protocol
    ///   version, naming a model or column the hub does not know, a key its model cannot read
    ///   or a value its column cannot hold, carrying a stamp more than a day ahead of the
    ///   hub's clock, claiming another user, or sent by a device that belongs to another user; ``ActiveObjectError/invalidArgument(_:)`` for an
    ///   empty `user`; ``DatabaseError``.
    public func handle(request: Data, user: String) async throws -> Data {
        guard !user.isEmpty else { throw ActiveObjectError.invalidArgument("the hub's user is empty") }
        let parsed = try parse(request, user: user)
        let reply = try await database.perform(.writing) { [self] in
            try database.transaction {
                try database.withAccess(.write) { access in
                    try HubStore(connection: access.connection, user: user, hub: hubID, columns: declaredColumns)
                        .exchange(parsed, limit: min(parsed.limit, maximumBatchSize))
                }
            }
        }
        return SyncJSONWriter.encode(reply)
    }

    /// Every row the hub holds for `user` in `model`'s table and that exists (not deleted), as
    /// column name → value, ordered by key: what a device of the user holds once synchronized.
    /// - Throws: ``ActiveObjectError/invalidArgument(_:)`` for a model the hub does not accept;
    ///   ``DatabaseError``.
    public func rows(of model: ActiveObject.Type, user: String) async throws -> [[String: DatabaseValue]] {
        let table = try ModelSchema.of(model).tableName
        guard let accepted = models[table] else {
            throw ActiveObjectError.invalidArgument("the hub does not synchronize \(String(describing: model))")
        }
        return try await database.perform(.reading) { [database, hubID, declaredColumns] in
            try database.read {
                try database.withAccess(.read) { access in
                    try HubStore(connection: access.connection, user: user, hub: hubID, columns: declaredColumns).rows(table: table, keyColumn: accepted.keyColumn)
                }
            }
        }
    }

    // MARK: Checking a request

    /// The request, checked whole before anything is applied.
    private func parse(_ data: Data, user: String) throws -> SyncRequest {
        guard data.count <= maximumRequestSize else {
            throw ActiveObjectError.syncRefused(
                reason: "the request is \(data.count) bytes; this hub accepts at most \(maximumRequestSize)")
        }
        let request: SyncRequest
        do {
            request = try JSONDecoder().decode(SyncRequest.self, from: data)
        } catch {
            // A request of another version is refused as such, even when its other parts
            // changed shape.
            if let version = Self.version(of: data), version != SyncProtocol.version {
                throw ActiveObjectError.syncRefused(
                    reason: "the request speaks protocol version \(version); this hub speaks version \(SyncProtocol.version)")
            }
            let detail = (error as? DecodingError)?.syncDescription ?? "\(error)"
            throw ActiveObjectError.syncRefused(reason: "the request cannot be parsed: \(detail)")
        }
        guard request.version == SyncProtocol.version else {
            throw ActiveObjectError.syncRefused(
                reason: "the request speaks protocol version \(request.version); this hub speaks version \(SyncProtocol.version)")
        }
        if let claimed = request.user, claimed != user {
            throw ActiveObjectError.syncRefused(reason: "the request is for another user than the one authenticated")
        }
        guard request.device != 0 else { throw ActiveObjectError.syncRefused(reason: "the request names no device") }
        guard request.since >= 0, request.limit >= 1 else {
            throw ActiveObjectError.syncRefused(reason: "the request's cursor or limit is out of range")
        }
        let latest = SyncStamp.latestAcceptable()
        var seen = Set<SyncRowKey>()
        for row in request.push {
            guard let model = models[row.table] else {
                throw ActiveObjectError.syncRefused(reason: "the hub does not synchronize a model of table \"\(row.table)\"")
            }
            if let problem = model.problem(with: row) { throw ActiveObjectError.syncRefused(reason: problem) }
            guard seen.insert(SyncRowKey(table: row.table, key: row.key)).inserted else {
                throw ActiveObjectError.syncRefused(reason: "the row \(row.key) of \(row.table) is pushed twice in one request")
            }
            if let late = row.fields.first(where: { $0.value.stamp.time > latest }) {
                throw ActiveObjectError.syncRefused(
                    reason: "the \"\(late.key)\" stamp of row \(row.key) of \(row.table) is more than a day ahead of the hub's clock")
            }
        }
        return request
    }

    /// The `"v"` of a request that could not be parsed.
    private static func version(of data: Data) -> Int? {
        struct Versioned: Decodable { var v: Int }
        return try? JSONDecoder().decode(Versioned.self, from: data).v
    }
}
