import Foundation
import Testing
@testable import ActiveObjects

/// A database frees everything it made when the last reference to it goes — its connections,
/// its writer's gate, its live-query center and monitor, and the closures the user gave it —
/// whether it was closed first or not, and after live queries ran. (A reference cycle through
/// the writer's commit sink and the monitor's factory used to keep them all.)
@Suite struct DatabaseLifetimeTests {
    /// Something a `trace` closure holds: freed with the database's options.
    final class Canary: Sendable {}

    /// Weak references to what a database owns, taken while it was alive.
    struct Parts {
        weak var database: Database?
        weak var writer: Connection?
        weak var gate: WriterGate?
        weak var observations: ObservationCenter?
        weak var background: BackgroundWork?
        weak var canary: Canary?

        var allFreed: Bool {
            database == nil && writer == nil && gate == nil && observations == nil && background == nil && canary == nil
        }
        var survivors: [String] {
            [database.map { _ in "database" }, writer.map { _ in "writer" }, gate.map { _ in "gate" },
             observations.map { _ in "observations" }, background.map { _ in "background" }, canary.map { _ in "trace closure" }]
                .compactMap { $0 }
        }
    }

    /// Opens a database, uses it (writes, reads, a live query that runs its monitor), and
    /// returns weak references to its parts once every strong one is gone.
    static func useAndDrop(at path: String, closing: Bool) async throws -> Parts {
        var parts = Parts()
        do {
            let canary = Canary()
            var options = Database.Options()
            options.trace = { _, _ in withExtendedLifetime(canary) {} }
            let db = try Database(path: path, options: options)
            parts = Parts(database: db, writer: db.writer, gate: db.writerGate, observations: db.observations,
                          background: db.background, canary: canary)
            try await db.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
            try await db.execute("INSERT INTO t VALUES (1)")
            _ = try await db.rows("SELECT * FROM t")
            let probe = LiveProbe(db.values { try db.scalar("SELECT count(*) FROM t") as Int? }) { $0 ?? -1 }
            #expect(await probe.waitFor(count: 1))
            try await db.execute("INSERT INTO t VALUES (2)")
            #expect(await probe.waitUntilLast { $0 == 2 })
            #expect(db.observations.isMonitoring)
            probe.cancel()
            #expect(await probe.waitForEnd())
            if closing { try db.close() }
        }
        // The monitor stops on its own queue, and async work finishes on the database's
        // queues: give them a moment.
        let deadline = Date().addingTimeInterval(10)
        while !parts.allFreed && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        return parts
    }

    @Test(arguments: [true, false])
    func everythingADatabaseMadeIsFreedWithIt(closing: Bool) async throws {
        let folder = try TemporaryDirectory()
        let parts = try await Self.useAndDrop(at: folder.path("lifetime.sqlite"), closing: closing)
        #expect(parts.allFreed, "still alive after the database was dropped: \(parts.survivors)")
    }

    /// The change monitor has no descriptor of its own to write to once stopped: stopping
    /// cancels its Dispatch sources, whose cancel handlers close the watch descriptors, on its
    /// queue; many monitors started and stopped while their files are written leave no watch
    /// open and nothing running.
    @Test func stoppedMonitorsReleaseTheirWatchesAndDoNothingMore() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("watched.bin")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var monitors: [ChangeMonitor] = []
        let looks = Locked(0)
        for _ in 0..<50 {
            let monitor = ChangeMonitor(paths: [path], look: { looks.withLock { $0 += 1 }; return false }, onChange: {})
            monitors.append(monitor)
            try handle.write(contentsOf: Data([1]))
            monitor.stop()
        }
        #expect(monitors.allSatisfy { $0.isStopped })
        try await Task.sleep(nanoseconds: 300_000_000)
        let settled = monitors.map(\.activityCount)
        // Writes after the stops wake none of them.
        for _ in 0..<20 { try handle.write(contentsOf: Data([2])) }
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(monitors.map(\.activityCount) == settled, "a stopped monitor still woke up")
        weak let first = monitors.first
        monitors.removeAll()
        let deadline = Date().addingTimeInterval(10)
        while first != nil && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(first == nil, "a stopped monitor was never freed")
    }
}
