import Foundation
import Testing
@testable import ActiveObjects

/// Requests a hostile or broken client could send: each is refused whole, with a clear error,
/// and nothing of it is applied.
@Suite struct SyncHubTests {
    /// A well-formed request pushing `rows` as `device`.
    static func request(device: Int64 = 42, user: String? = nil, version: Int = 1, rows: [SyncRow]) throws -> Data {
        try JSONEncoder().encode(SyncRequest(version: version, device: device, user: user, push: rows, since: 0, limit: 100))
    }

    static func note(_ key: String, title: DatabaseValue = .text("hello"), extra: [String: DatabaseValue] = [:]) -> SyncRow {
        let stamp = SyncStamp(time: SyncStamp.physicalNow(), node: 42)
        var fields: [String: SyncField] = ["+": SyncField(value: .null, stamp: stamp),
                                           "title": SyncField(value: title, stamp: stamp)]
        for (column, value) in extra { fields[column] = SyncField(value: value, stamp: stamp) }
        return SyncRow(table: "sync_note", key: .text(key), fields: fields)
    }

    /// The hub's stored rows, all users.
    static func storedRows(_ world: SyncWorld) async throws -> Int {
        try await world.hubDatabase.scalar("SELECT count(*) FROM activeobjects_hub_fields") ?? -1
    }

    static func expectRefused(_ world: SyncWorld, _ data: Data, user: String = "alice", mentioning words: [String],
                              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let before = try await storedRows(world)
        do {
            _ = try await world.hub.handle(request: data, user: user)
            Issue.record("the request was accepted", sourceLocation: sourceLocation)
        } catch let ActiveObjectError.syncRefused(reason) {
            for word in words {
                #expect(reason.contains(word), "\(reason) does not mention \(word)", sourceLocation: sourceLocation)
            }
        }
        #expect(try await storedRows(world) == before, "something was applied", sourceLocation: sourceLocation)
    }

    @Test func aValidRequestIsAppliedAndAReplayChangesNothing() async throws {
        let world = try SyncWorld()
        let data = try Self.request(rows: [Self.note("n1")])
        let first = try JSONDecoder().decode(SyncReply.self, from: try await world.hub.handle(request: data, user: "alice"))
        #expect(first.accepted == 1)
        let positions = try await world.hubDatabase.scalar("SELECT max(seq) FROM activeobjects_hub_rows") as Int?
        let replay = try JSONDecoder().decode(SyncReply.self, from: try await world.hub.handle(request: data, user: "alice"))
        #expect(replay.accepted == 1)
        // Applied once: no new position, so no device pulls the row twice.
        #expect(try await world.hubDatabase.scalar("SELECT max(seq) FROM activeobjects_hub_rows") as Int? == positions)
        #expect(try await hubDump(world.hub, SyncNote.self, columns: ["uuid", "title"]) == ["uuid=TEXT 'n1' title=TEXT 'hello'"])
    }

    @Test func truncatedOrGarbageRequestsAreRefused() async throws {
        let world = try SyncWorld()
        let data = try Self.request(rows: [Self.note("n1"), Self.note("n2")])
        for cut in [1, data.count / 3, data.count / 2, data.count - 1] {
            try await Self.expectRefused(world, data.prefix(cut), mentioning: ["cannot be parsed"])
        }
        try await Self.expectRefused(world, Data("not json".utf8), mentioning: ["cannot be parsed"])
        try await Self.expectRefused(world, Data(), mentioning: ["cannot be parsed"])
        try await Self.expectRefused(world, Data(#"{"v":1,"d":42,"p":[{"t":"sync_note","k":"x","f":{"title":["a"]}}],"s":0,"l":5}"#.utf8),
                                     mentioning: ["cannot be parsed"])
    }

    @Test func anotherProtocolVersionIsRefused() async throws {
        let world = try SyncWorld()
        try await Self.expectRefused(world, try Self.request(version: 2, rows: [Self.note("n1")]),
                                     mentioning: ["version 2", "version 1"])
        try await Self.expectRefused(world, Data(#"{"v":99,"whatever":true}"#.utf8), mentioning: ["version 99"])
    }

    @Test func unknownModelsColumnsAndBadValuesAreRefusedWhole() async throws {
        let world = try SyncWorld()
        var secret = Self.note("n2")
        secret.table = "secrets"
        // A valid row beside the bad one: neither is applied.
        try await Self.expectRefused(world, try Self.request(rows: [Self.note("n1"), secret]), mentioning: ["secrets"])
        try await Self.expectRefused(world, try Self.request(rows: [Self.note("n1"), Self.note("n3", extra: ["password": .text("x")])]),
                                     mentioning: ["password"])
        try await Self.expectRefused(world, try Self.request(rows: [Self.note("n1", title: .null)]),
                                     mentioning: ["title", "NULL"])
        try await Self.expectRefused(world, try Self.request(rows: [Self.note("n1", extra: ["rank": .text("seven")])]),
                                     mentioning: ["rank", "INTEGER"])
        var integerKey = Self.note("n1")
        integerKey.key = .integer(7)
        try await Self.expectRefused(world, try Self.request(rows: [integerKey]), mentioning: ["key"])
        try await Self.expectRefused(world, try Self.request(rows: [Self.note("n1"), Self.note("n1")]), mentioning: ["twice"])
        #expect(try await world.hub.rows(of: SyncNote.self, user: "alice").isEmpty)
    }

    @Test func usersStayApart() async throws {
        let world = try SyncWorld()
        _ = try await world.hub.handle(request: try Self.request(device: 1, rows: [Self.note("mine")]), user: "alice")
        // Claiming another user than the one authenticated.
        try await Self.expectRefused(world, try Self.request(device: 2, user: "alice", rows: [Self.note("x")]), user: "bob",
                                     mentioning: ["another user"])
        // Alice's device, used by bob.
        try await Self.expectRefused(world, try Self.request(device: 1, rows: [Self.note("x")]), user: "bob",
                                     mentioning: ["belongs to another user"])
        // Bob's own device sees none of alice's rows, and the same key is his own row.
        let reply = try JSONDecoder().decode(
            SyncReply.self, from: try await world.hub.handle(request: try Self.request(device: 3, rows: [Self.note("mine", title: .text("bob's"))]), user: "bob"))
        #expect(reply.rows.isEmpty)
        #expect(try await hubDump(world.hub, SyncNote.self, user: "alice", columns: ["uuid", "title"]) == ["uuid=TEXT 'mine' title=TEXT 'hello'"])
        #expect(try await hubDump(world.hub, SyncNote.self, user: "bob", columns: ["uuid", "title"]) == ["uuid=TEXT 'mine' title=TEXT 'bob's'"])
        // Two devices of alice and one of bob, through engines.
        let (a, engineA) = try world.addDevice(user: "alice")
        let (b, engineB) = try world.addDevice(user: "bob")
        _ = try await engineA.synchronize()
        _ = try await engineB.synchronize()
        #expect(try dump(a, "sync_note").count == 1)
        #expect(try await a.scalar("SELECT title FROM sync_note") as String? == "hello")
        #expect(try await b.scalar("SELECT title FROM sync_note") as String? == "bob's")
        await #expect(throws: ActiveObjectError.invalidArgument("the hub's user is empty")) {
            try await world.hub.handle(request: try Self.request(rows: []), user: "")
        }
    }

    @Test func anOversizedRequestIsRefusedBeforeItIsRead() async throws {
        let world = try SyncWorld()
        let small = try SyncHub(database: world.hubDatabase, models: [SyncNote.self, SyncFolder.self], maximumRequestSize: 1000)
        let big = try Self.request(rows: [Self.note("n1", title: .text(String(repeating: "x", count: 2000)))])
        do {
            _ = try await small.handle(request: big, user: "alice")
            Issue.record("accepted")
        } catch let ActiveObjectError.syncRefused(reason) {
            #expect(reason.contains("\(big.count) bytes") && reason.contains("at most 1000"), "\(reason)")
        }
        #expect(try await world.hub.rows(of: SyncNote.self, user: "alice").isEmpty)
    }

    @Test func theEngineRefusesAReplyItCannotRead() async throws {
        struct Garbage: SyncTransport {
            let reply: Data
            func exchange(_ request: Data) async throws -> Data { reply }
        }
        let world = try SyncWorld()
        let (db, _) = try world.addDevice()
        try await db.execute("INSERT INTO sync_note (uuid, title) VALUES ('k', 'kept')")
        for reply in [Data("<html>502</html>".utf8), Data(#"{"v":2,"a":0,"r":[],"c":0,"m":false}"#.utf8)] {
            let engine = try SyncEngine(database: db, models: [SyncFolder.self, SyncNote.self], transport: Garbage(reply: reply))
            await #expect(throws: ActiveObjectError.self) { try await engine.synchronize() }
            // Nothing lost: the change is still queued.
            #expect(try engine.pendingChangeCount() == 1)
        }
    }
}
