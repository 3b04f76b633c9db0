import Foundation
import Testing
@testable import ActiveObjects

/// A network between devices and a hub that loses, repeats and delays messages.
final class LossyNetwork: Sendable {
    enum Fate { case deliver, dropRequest, dropReply, duplicate, delay }
    struct Lost: Error {}
    struct State {
        var generator: SeededGenerator
        var delayed: [(request: Data, user: String)] = []
        var lossy = true
        var fates: [String: Int] = [:]
    }

    let hub: SyncHub
    let state: LockedValue<State>

    init(hub: SyncHub, seed: UInt64) {
        self.hub = hub
        state = LockedValue(State(generator: SeededGenerator(seed: seed)))
    }

    func setLossy(_ lossy: Bool) { state.withLock { $0.lossy = lossy } }

    func transport(user: String) -> any SyncTransport { Endpoint(network: self, user: user) }

    struct Endpoint: SyncTransport {
        let network: LossyNetwork
        let user: String
        func exchange(_ request: Data) async throws -> Data { try await network.exchange(request, user: user) }
    }

    func exchange(_ request: Data, user: String) async throws -> Data {
        let (fate, late): (Fate, [(request: Data, user: String)]) = state.withLock { state in
            // Requests held back arrive now, some of them, out of order.
            var late: [(request: Data, user: String)] = []
            if !state.lossy {
                late = state.delayed
                state.delayed = []
            } else if !state.delayed.isEmpty && Int.random(in: 0..<3, using: &state.generator) == 0 {
                late.append(state.delayed.remove(at: Int.random(in: 0..<state.delayed.count, using: &state.generator)))
            }
            guard state.lossy else { return (.deliver, late) }
            let roll = Int.random(in: 0..<100, using: &state.generator)
            let fate: Fate = switch roll {
            case 0..<10: .dropRequest
            case 10..<20: .dropReply
            case 20..<28: .duplicate
            case 28..<34: .delay
            default: .deliver
            }
            state.fates["\(fate)", default: 0] += 1
            if fate == .delay { state.delayed.append((request, user)) }
            return (fate, late)
        }
        for message in late { _ = try? await hub.handle(request: message.request, user: message.user) }
        switch fate {
        case .deliver: return try await hub.handle(request: request, user: user)
        case .dropRequest, .delay: throw Lost()
        case .dropReply:
            _ = try await hub.handle(request: request, user: user)
            throw Lost()
        case .duplicate:
            _ = try await hub.handle(request: request, user: user)
            return try await hub.handle(request: request, user: user)
        }
    }
}

/// The merge §18 promises, computed from the edits in the order they were committed: for each
/// field the value of the latest edit; a row exists when its latest insert came after its
/// latest delete.
struct ExpectedMerge {
    struct Row {
        var lastInsert = 0
        var lastDelete = 0
        var fields: [String: String] = [:]
    }
    private(set) var rows: [String: Row] = [:]
    private var clock = 0

    mutating func inserted(_ key: String, _ fields: [String: String]) {
        clock += 1
        rows[key, default: Row()].lastInsert = clock
        for (name, value) in fields { rows[key]!.fields[name] = value }
    }

    mutating func updated(_ key: String, _ name: String, _ value: String) {
        clock += 1
        rows[key, default: Row()].fields[name] = value
    }

    mutating func deleted(_ key: String) {
        clock += 1
        rows[key, default: Row()].lastDelete = clock
    }

    /// The rows that exist, as `dump` prints them.
    func expectedDump(columns: [String]) -> [String] {
        rows.filter { $0.value.lastInsert > $0.value.lastDelete }.sorted { $0.key < $1.key }.map { key, row in
            (["uuid=TEXT '\(key)'"] + columns.map { "\($0)=\(row.fields[$0] ?? "?")" }).joined(separator: " ")
        }
    }
}

@Suite struct SyncPropertyTests {
    static let columns = ["title", "body", "rank", "score", "folderUUID"]

    /// Three devices edit at random and synchronize at random over a network that drops
    /// requests, drops replies after the hub applied them, repeats and delays them. After a
    /// final round of synchronizations every device and the hub hold exactly the merge of
    /// every edit committed.
    @Test(arguments: [UInt64(11), 2024, 77])
    func randomEditsOverALossyNetworkEndEqualToTheExpectedMerge(seed: UInt64) async throws {
        let world = try SyncWorld(function: "property-\(seed)")
        let network = LossyNetwork(hub: world.hub, seed: seed)
        var devices: [(Database, SyncEngine)] = []
        for _ in 0..<3 { devices.append(try world.addDevice(transport: network.transport(user: "alice"), batchSize: 7)) }
        var generator = SeededGenerator(seed: seed &* 31 &+ 7)
        var expected = ExpectedMerge()
        let keys = (0..<40).map { String(format: "key-%02d", $0) }
        var unique = 0
        func nextValue() -> Int { unique += 1; return unique }
        var failedSyncs = 0
        var history: [String: [String]] = [:]
        for step in 0..<800 {
            // Edits at least 2 ms apart: the clock's order is then the order of commits.
            try await Task.sleep(for: .milliseconds(2))
            let device = Int.random(in: 0..<3, using: &generator)
            let db = devices[device].0
            let key = keys.randomElement(using: &generator)!
            let exists = try await db.scalar("SELECT count(*) FROM sync_note WHERE uuid = ?", [key]) as Int? == 1
            let roll = Int.random(in: 0..<100, using: &generator)
            func note(_ text: String) { history[key, default: []].append("\(step) d\(device) \(text)") }
            if roll < 12 {
                do { _ = try await devices[device].1.synchronize() } catch { failedSyncs += 1 }
            } else if !exists && roll < 50 {
                let n = nextValue()
                let title = "t\(n)", body = "b\(n)", rank = n, score = Double(n) / 4
                if Bool.random(using: &generator) {
                    try await db.execute("INSERT INTO sync_note (uuid, title, body, rank, score) VALUES (?, ?, ?, ?, ?)",
                                         [key, title, body, rank, score])
                } else {
                    try await db.transaction {
                        try onDevice(db) {
                            let note = SyncNote()
                            note.uuid = UUID(uuidString: "00000000-0000-0000-0000-0000000000\(key.suffix(2))")!
                            note.title = title
                            note.body = body
                            note.rank = rank
                            note.score = score
                            try note.insert()
                            // Models store the UUID's text: rename to the test's key.
                            try db.execute("UPDATE sync_note SET uuid = ? WHERE uuid = ?", [key, note.uuid.uuidString])
                        }
                    }
                    // The rename is a delete of the UUID key and an insert of `key`.
                    let uuidKey = "00000000-0000-0000-0000-0000000000\(key.suffix(2))"
                    expected.inserted(uuidKey, [:])
                    expected.deleted(uuidKey)
                }
                note("insert \(n)")
                expected.inserted(key, ["title": "TEXT 't\(n)'", "body": "TEXT 'b\(n)'", "rank": "INTEGER \(n)",
                                        "score": "REAL \(Double(n) / 4)", "folderUUID": "NULL"])
            } else if exists && roll < 85 {
                let n = nextValue()
                switch Int.random(in: 0..<3, using: &generator) {
                case 0:
                    try await db.execute("UPDATE sync_note SET title = ? WHERE uuid = ?", ["u\(n)", key])
                    expected.updated(key, "title", "TEXT 'u\(n)'"); note("title u\(n)")
                case 1:
                    try await db.execute("UPDATE sync_note SET rank = ?, body = ? WHERE uuid = ?", [n, "c\(n)", key])
                    expected.updated(key, "rank", "INTEGER \(n)")
                    expected.updated(key, "body", "TEXT 'c\(n)'"); note("rank/body \(n)")
                default:
                    try await db.execute("UPDATE sync_note SET score = NULL WHERE uuid = ? AND score IS NOT NULL", [key])
                    if try await db.scalar("SELECT changes()") as Int? == 1 { expected.updated(key, "score", "NULL") }
                }
            } else if exists {
                try await db.execute("DELETE FROM sync_note WHERE uuid = ?", [key])
                expected.deleted(key); note("delete")
            }
        }
        // The final round, on a network that delivers (what was held back arrives first).
        network.setLossy(false)
        for _ in 0..<2 {
            for (_, engine) in devices { _ = try await engine.synchronize() }
        }
        for (_, engine) in devices {
            #expect(try engine.pendingChangeCount() == 0)
            #expect(try await engine.synchronize() == SyncReport(pushed: 0, pulled: 0))
        }
        let want = expected.expectedDump(columns: Self.columns)
        #expect(want.count > 5)
        for (index, (db, _)) in devices.enumerated() {
            let got = try dump(db, "sync_note")
            let extra = Set(got).subtracting(want).sorted().prefix(4), missing = Set(want).subtracting(got).sorted().prefix(4)
            if got != want, let bad = extra.first ?? missing.first {
                // The edits of the first key that differs, for the failure message.
                let badKey = String(bad.split(separator: "'")[1])
                let edits = history[badKey, default: []].filter { !$0.contains("sync") }.joined(separator: "; ")
                Issue.record("seed \(seed) device \(index), \(badKey): \(edits)")
            }
            if got != want { Issue.record("seed \(seed) device \(index): extra \(extra) missing \(missing)") }
        }
        let hub = try await hubDump(world.hub, SyncNote.self, columns: ["uuid"] + Self.columns)
        if hub != want { Issue.record("seed \(seed) hub: extra \(Set(hub).subtracting(want).sorted().prefix(4)) missing \(Set(want).subtracting(hub).sorted().prefix(4))") }
        let fates = network.state.withLock { $0.fates }
        #expect(fates["dropRequest", default: 0] > 0 && fates["dropReply", default: 0] > 0
                && fates["duplicate", default: 0] > 0 && fates["delay", default: 0] > 0, "\(fates)")
        #expect(failedSyncs > 0)
    }
}
