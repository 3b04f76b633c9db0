import Foundation
import Testing
@testable import ActiveObjects

/// What live queries cost the writer: the observation center routes a commit only to the
/// observations that read a written table (kept per table, so that commits to unobserved
/// tables do not call into every observation), and the change monitor looks at the writer at
/// most a few times per quiet period under a stream of writes, while still noticing another
/// connection's commit made during that stream.
@Suite struct LiveQueryCostTests {
    /// An observation as the center sees it, counting what it is told.
    final class Probe: ObservationEntry, @unchecked Sendable {
        // Safety of @unchecked Sendable: the counters are only touched under `lock`.
        private let lock = NSLock()
        private var changed = 0
        var tablesChangedCount: Int { lock.withLock { changed } }
        var wantsRowChanges: Bool { false }
        var rowTable: String { "" }
        func tablesChanged(_ rows: CommittedRows?) { lock.withLock { changed += 1 } }
        func externalChange() {}
        func end(throwing error: Error) {}
    }

    static func commit(writing tables: Set<String>) -> [StatementInfo] {
        [StatementInfo(readTables: [], writtenTables: tables, transactionControl: nil, changesSchema: false)]
    }

    @Test func aCommitReachesOnlyTheObservationsThatReadAWrittenTable() throws {
        let gate = WriterGate(connection: try Connection(path: ":memory:", options: Database.Options(), role: .writer))
        let center = ObservationCenter(watchedPaths: [], gate: gate)
        let first = Probe(), second = Probe(), third = Probe()
        #expect(center.add(first) && center.add(second) && center.add(third))

        // Before its first fetch, an observation is concerned by every commit.
        center.committed(Self.commit(writing: ["note"]), rows: nil)
        #expect([first, second, third].map(\.tablesChangedCount) == [1, 1, 1])

        _ = center.record(tables: ["note", "author"], for: first, fetchStartedAt: center.currentCommitSequence)
        _ = center.record(tables: ["author"], for: second, fetchStartedAt: center.currentCommitSequence)
        _ = center.record(tables: ["tag"], for: third, fetchStartedAt: center.currentCommitSequence)
        center.committed(Self.commit(writing: ["note"]), rows: nil)
        #expect([first, second, third].map(\.tablesChangedCount) == [2, 1, 1])
        center.committed(Self.commit(writing: ["author"]), rows: nil)
        #expect([first, second, third].map(\.tablesChangedCount) == [3, 2, 1])
        center.committed(Self.commit(writing: ["other"]), rows: nil)
        #expect([first, second, third].map(\.tablesChangedCount) == [3, 2, 1])
        // Several statements in one commit: the union of what they wrote.
        center.committed(Self.commit(writing: ["other"]) + Self.commit(writing: ["tag"]), rows: nil)
        #expect([first, second, third].map(\.tablesChangedCount) == [3, 2, 2])

        // A later fetch that reads other tables replaces what the observation follows.
        _ = center.record(tables: ["tag"], for: first, fetchStartedAt: center.currentCommitSequence)
        center.committed(Self.commit(writing: ["note"]), rows: nil)
        #expect([first, second, third].map(\.tablesChangedCount) == [3, 2, 2])
        center.committed(Self.commit(writing: ["tag"]), rows: nil)
        #expect([first, second, third].map(\.tablesChangedCount) == [4, 2, 3])

        // A table read by two observations stays observed until both are gone.
        center.remove(third)
        center.committed(Self.commit(writing: ["tag"]), rows: nil)
        #expect([first, second, third].map(\.tablesChangedCount) == [5, 2, 3])
        center.remove(first)
        center.committed(Self.commit(writing: ["tag"]), rows: nil)
        center.committed(Self.commit(writing: ["author"]), rows: nil)
        #expect([first, second, third].map(\.tablesChangedCount) == [5, 3, 3])
        // Recording for an observation already removed is ignored.
        _ = center.record(tables: ["note"], for: first, fetchStartedAt: center.currentCommitSequence)
        center.committed(Self.commit(writing: ["note"]), rows: nil)
        #expect([first, second, third].map(\.tablesChangedCount) == [5, 3, 3])
        center.remove(second)
        #expect(center.count == 0)
        #expect(!center.isObserving)
    }

    @Test func commitsToOtherTablesLeaveLiveQueriesAlone() async throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.path("cost.sqlite"))
        defer { try? db.close() }
        try await db.execute("CREATE TABLE watched (id INTEGER PRIMARY KEY, value INTEGER)")
        try await db.execute("CREATE TABLE busy (id INTEGER PRIMARY KEY, value INTEGER)")
        try await db.execute("INSERT INTO watched (value) VALUES (1)")
        let elements = Locked(0)
        let task = Task.detached {
            for try await _ in db.values({ try db.rows("SELECT value FROM watched") }) {
                elements.withLock { $0 += 1 }
            }
        }
        defer { task.cancel() }
        let deadline = Date(timeIntervalSinceNow: 10)
        while elements.current < 1 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(elements.current == 1)
        for value in 0..<200 { try await db.execute("INSERT INTO busy (value) VALUES (?)", [value]) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(elements.current == 1)
        try await db.execute("UPDATE watched SET value = 2")
        let secondDeadline = Date(timeIntervalSinceNow: 10)
        while elements.current < 2 && Date() < secondDeadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(elements.current == 2)
    }

    @Test func underAStreamOfWritesTheMonitorLooksAFewTimesPerQuietPeriodAndStillNotices() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("watched.bin")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let looks = Locked(0)
        let version = Locked<Int64>(1)
        let changes = Locked(0)
        let watch = DataVersionWatch { changes.withLock { $0 += 1 } }
        let monitor = ChangeMonitor(paths: [path], look: {
            looks.withLock { $0 += 1 }
            return watch.record(version.current)
        }, onChange: watch.onChange)
        defer { monitor.stop() }
        // Its thread runs and reads the first version, which counts as a change (a baseline
        // taken late must not hide a commit).
        let started = Date(timeIntervalSinceNow: 10)
        while changes.current < 1 && Date() < started { try await Task.sleep(for: .milliseconds(5)) }
        #expect(changes.current == 1)

        // Writes every ~0.2 ms for a while (on a thread of its own); halfway, "another
        // connection" commits.
        let writes = 1_000
        let elapsed: Double = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
                    defer { try? handle.close() }
                    let start = Date()
                    for index in 0..<writes {
                        try handle.write(contentsOf: Data([UInt8(truncatingIfNeeded: index)]))
                        if index == writes / 2 { version.withLock { $0 += 1 } }
                        usleep(200)
                    }
                    continuation.resume(returning: Date().timeIntervalSince(start) * 1000)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        let deadline = Date(timeIntervalSinceNow: 10)
        while changes.current < 2 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(changes.current == 2)
        // At most: a wake-up per quiet period, each with its first two rechecks and the look
        // when the quiet period ends (the later rechecks are replaced by the next wake-up),
        // plus the tail of rechecks after the last write. Without the quiet period it looks
        // once per write or so.
        let bound = Int(elapsed / Double(ChangeMonitor.quietPeriod) + 2) * 3 + ChangeMonitor.recheckDelays.count + 2
        #expect(looks.current <= min(bound, writes / 3), "looked \(looks.current) times for \(writes) writes in \(Int(elapsed)) ms")
    }

    @Test func theQuietPeriodGrowsUnderASteadyStreamOfWritesAndShrinksAfterAPause() {
        let shortest = ChangeMonitor.quietPeriod, longest = ChangeMonitor.longestQuietPeriod
        // Written again at once after watching resumed: twice as long, up to the longest.
        #expect(ChangeMonitor.nextQuietPeriod(previous: shortest, sinceWatching: 0) == shortest * 2)
        #expect(ChangeMonitor.nextQuietPeriod(previous: longest, sinceWatching: 1) == longest)
        // Written after a pause at least as long as the last quiet period: back to the shortest.
        #expect(ChangeMonitor.nextQuietPeriod(previous: 20, sinceWatching: 20) == shortest)
        #expect(ChangeMonitor.nextQuietPeriod(previous: shortest, sinceWatching: 1_000) == shortest)
        // After a pause every recheck is planned; under a steady stream, only those after the
        // quiet period (its end has a look of its own).
        #expect(ChangeMonitor.recheckDelays(quietLength: shortest) == ChangeMonitor.recheckDelays)
        #expect(ChangeMonitor.recheckDelays(quietLength: longest) == ChangeMonitor.recheckDelays.filter { $0 > longest })
        #expect(!ChangeMonitor.recheckDelays(quietLength: longest).isEmpty)
    }

    @Test func whileTheWriterIsBusyTheMonitorRetriesOnceEveryFewMillisecondsAndNoticesAfterwards() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("busy.bin")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let looks = Locked(0)
        let busy = Locked(false)
        let version = Locked<Int64>(1)
        let changes = Locked(0)
        let watch = DataVersionWatch { changes.withLock { $0 += 1 } }
        let monitor = ChangeMonitor(paths: [path], look: {
            looks.withLock { $0 += 1 }
            return busy.current ? nil : watch.record(version.current)
        }, onChange: watch.onChange)
        defer { monitor.stop() }
        try await Task.sleep(for: .milliseconds(50))   // its thread reads the first version

        // Another connection commits while this database's writer stays busy for a second:
        // every planned look finds it busy, and each must not start a retry chain of its own.
        busy.withLock { $0 = true }
        looks.withLock { $0 = 0 }
        let start = Date()
        version.withLock { $0 += 1 }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.write(contentsOf: Data([1]))
        try handle.close()
        try await Task.sleep(for: .seconds(1))
        let elapsed = Date().timeIntervalSince(start) * 1000
        let busyLooks = looks.current
        busy.withLock { $0 = false }
        let deadline = Date(timeIntervalSinceNow: 10)
        while changes.current < 1 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(changes.current == 1)
        // One retry per 5 ms, plus the planned looks (which may each land between retries).
        let bound = Int(elapsed / 5) + ChangeMonitor.recheckDelays.count + 3
        #expect(busyLooks <= bound, "looked \(busyLooks) times in \(Int(elapsed)) ms while the writer was busy")
    }
}
