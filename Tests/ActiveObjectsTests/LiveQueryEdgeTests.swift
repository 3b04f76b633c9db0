import Foundation
import Testing
@testable import ActiveObjects

/// Live queries at the edges: schema changes after statements were cached, busy errors while
/// re-fetching, raw savepoints rolled back, and other processes' commits during a stream of
/// this process's own. Raw SQL on databases of their own (no shared model database), so the
/// suite runs beside the others; every wait has a timeout (``LiveProbe``).
@Suite struct LiveQueryEdgeTests {
    /// `SELECT count(*) FROM <table>` as a live sequence of counts.
    static func counting(_ table: String, in db: Database) -> LiveProbe<Int> {
        LiveProbe(db.values { try db.scalar("SELECT count(*) FROM \(table)") as Int? }) { $0 ?? -1 }
    }

    /// Runs `body` on a thread of its own; returns once `body` has signalled that it holds
    /// what it must hold (it calls its argument), and a flag that turns true when it ended.
    static func hold(_ body: @escaping @Sendable (@escaping @Sendable () -> Void) throws -> Void) async -> Locked<Bool> {
        let holding = Locked(false), done = Locked(false)
        Thread.detachNewThread {
            try? body { holding.withLock { $0 = true } }
            holding.withLock { $0 = true }
            done.withLock { $0 = true }
        }
        let deadline = Date().addingTimeInterval(10)
        while !holding.current && Date() < deadline { try? await Task.sleep(nanoseconds: 1_000_000) }
        return done
    }

    // MARK: Other processes during a stream of own commits

    struct Arrival: Sendable {
        let count: Int
        let at: Date
    }

    @Test func anotherConnectionsCommitsAreNoticedWhileThisDatabaseCommitsBackToBack() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("stream.sqlite")
        let db = try Database(path: path)
        defer { try? db.close() }
        try await db.execute("CREATE TABLE a (x INTEGER)")
        try await db.execute("CREATE TABLE b (x INTEGER)")
        let other = try Database(path: path)
        defer { try? other.close() }
        let probe = LiveProbe(db.values { try db.scalar("SELECT count(*) FROM b") as Int? }) {
            Arrival(count: $0 ?? -1, at: Date())
        }
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))

        // This database commits to `a` in a tight loop on a thread of its own, taking its
        // writer again as soon as it gave it back. (Each turn keeps the writer a moment after
        // its commit, outside any transaction: the file's write lock is free then, so that
        // SQLite's busy handler lets the other connection's commits in.)
        let stop = Locked(false), ownCommits = Locked(0)
        let loopEnded = await Self.hold { started in
            started()
            while !stop.current {
                try db.withWriter { _ in
                    try db.execute("INSERT INTO a VALUES (1)")
                    usleep(500)
                }
                ownCommits.withLock { $0 += 1 }
            }
        }
        // …while another connection commits ten rows to `b`, with pauses.
        let start = Date()
        var committed: [Date] = []
        for value in 1...10 {
            try await Task.sleep(nanoseconds: 130_000_000)
            try await other.execute("INSERT INTO b VALUES (?)", [value])
            committed.append(Date())
        }
        try await Task.sleep(nanoseconds: 200_000_000)
        stop.withLock { $0 = true }
        let elapsed = Date().timeIntervalSince(start)
        let deadline = Date().addingTimeInterval(10)
        while !loopEnded.current && Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(await probe.waitFor(count: 2))
        let arrivals = probe.elements
        var delays: [Double] = []
        for (index, time) in committed.enumerated() {
            guard let seen = arrivals.first(where: { $0.count >= index + 1 }) else {
                Issue.record("the commit of row \(index + 1) of `b` was never seen")
                continue
            }
            let delay = seen.at.timeIntervalSince(time)
            delays.append(delay)
            #expect(delay <= 0.5, "row \(index + 1) of `b` seen \(Int(delay * 1000)) ms after its commit")
        }
        print("RELIABILITY live queries: \(ownCommits.current) own commits in \(Int(elapsed * 1000)) ms; another connection's 10 commits seen after (ms) \(delays.map { Int($0 * 1000) })")
        #expect(arrivals.last?.count == 10)
        #expect(ownCommits.current > 10, "the loop did not commit back to back")
    }
}
