import ActiveObjects
import GRDB
import Foundation

// What the live-query workloads ask of a contender: observe the first 100 rows of `item`
// (ActiveObjects `Query.values()`, GRDB `ValueObservation.values(in:)`, both iterated with
// `for try await` on the main actor), observe other tables, and commit one changed row
// (ActiveObjects: `save()` of a loaded object, autocommit; GRDB: `update(_:columns:)` in
// `pool.write`, its documented way, a small transaction).

/// The tables the overhead workload observes, none of which the commits touch.
let otherTableCount = 10

func createOtherTablesSQL(_ index: Int) -> [String] {
    ["CREATE TABLE IF NOT EXISTS other\(index) (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)",
     "INSERT INTO other\(index) (value) VALUES (\(index))"]
}

protocol LiveContender: ConcurrentContender {
    /// Observes the first 100 rows of `item` by id, handing the `intA` of row 1 of each
    /// element to `tracker`, until it says the run is over.
    @MainActor func observeFirstRows(_ tracker: LiveTracker) async throws
    /// Starts `count` observations, each of one `other<i>` table, counting first elements in
    /// `started`. Cancel the tasks to end them.
    func observeOtherTables(_ count: Int, started: LockedBox<Int>) -> [Task<Void, Error>]
    /// Makes, on the calling thread, a function that commits `intA = marker` into row 1.
    func makeCommitter() throws -> (Int) throws -> Void
}

extension ActiveObjectsConcurrentContender: LiveContender {
    @MainActor func observeFirstRows(_ tracker: LiveTracker) async throws {
        for try await items in Item.all.order(by: "id").limit(100).values() {
            guard items.count == 100 else { throw BenchError("live: \(items.count) rows, expected 100") }
            if tracker.received(marker: items[0].intA) { break }
        }
    }

    func observeOtherTables(_ count: Int, started: LockedBox<Int>) -> [Task<Void, Error>] {
        let database = database
        return (0..<count).map { index in
            Task.detached {
                for try await _ in database.values({ try database.rows("SELECT count(*) FROM other\(index)") }) {
                    started.withLock { $0 += 1 }
                }
            }
        }
    }

    func makeCommitter() throws -> (Int) throws -> Void {
        guard let item = try Item.find(id: 1) else { throw BenchError("live: no row 1") }
        return { marker in
            item.intA = marker
            try item.save()
        }
    }
}

extension GRDBPoolContender: LiveContender {
    @MainActor func observeFirstRows(_ tracker: LiveTracker) async throws {
        let observation = ValueObservation.tracking { db in
            try HandItem.order(Column("id")).limit(100).fetchAll(db)
        }
        for try await records in observation.values(in: pool) {
            guard records.count == 100 else { throw BenchError("live: \(records.count) rows, expected 100") }
            if tracker.received(marker: records[0].intA) { break }
        }
    }

    func observeOtherTables(_ count: Int, started: LockedBox<Int>) -> [Task<Void, Error>] {
        let pool = pool
        return (0..<count).map { index in
            Task.detached {
                let observation = ValueObservation.tracking { db in
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM other\(index)")
                }
                for try await _ in observation.values(in: pool) {
                    started.withLock { $0 += 1 }
                }
            }
        }
    }

    func makeCommitter() throws -> (Int) throws -> Void {
        let pool = pool
        guard var record = try pool.read({ try HandItem.fetchOne($0, key: 1) }) else { throw BenchError("live: no row 1") }
        return { marker in
            record.intA = marker
            let copy = record
            try pool.write { db in try copy.update(db, columns: [Column("intA")]) }
        }
    }
}

/// One run of the commit → element workload: the committing thread and the observing loop
/// meet here. The committer waits for the element of its previous commit (at most 2 s) before
/// the next one, so every commit is its own transaction and no element is coalesced away.
final class LiveTracker: @unchecked Sendable {
    // Safety of @unchecked Sendable: the arrays are only touched under `lock`.
    let commits: Int
    /// Markers are `base + 1 … base + commits` (the seeded values of intA stay below 2,000,000;
    /// each run has its own base, so that an element repeating an earlier run's state is not
    /// taken for one of this run's).
    let base: Int
    private let lock = NSLock()
    private var returned: [UInt64?]
    private var arrived: [UInt64?]
    private var sawFirst = false
    private let acknowledged = DispatchSemaphore(value: 0)

    init(commits: Int, base: Int) {
        self.commits = commits
        self.base = base
        returned = Array(repeating: nil, count: commits + 1)
        arrived = Array(repeating: nil, count: commits + 1)
    }

    /// The observer got an element whose row 1 holds `marker`; true once the last commit's
    /// element arrived (the loop may end).
    func received(marker: Int) -> Bool {
        let now = monotonicNanoseconds()
        let k = marker - base
        let (signal, last): (Bool, Bool) = lock.withLock {
            if !sawFirst {
                sawFirst = true
                return (true, false)
            }
            guard (1...commits).contains(k), arrived[k] == nil else { return (false, false) }
            arrived[k] = now
            return (true, k == commits)
        }
        if signal { acknowledged.signal() }
        return last
    }

    /// The committing side, on its own thread: waits for the first element, then commits
    /// marker after marker, each after the previous one's element (or 2 s) and a 1 ms pause.
    func commitAll(_ commit: (Int) throws -> Void) throws {
        for k in 1...commits {
            _ = acknowledged.wait(timeout: .now() + 2)
            sleepUntil(monotonicNanoseconds() + 1_000_000)
            try commit(base + k)
            let now = monotonicNanoseconds()
            lock.withLock { returned[k] = now }
        }
    }

    /// Commit → element latencies in ms: from the moment the committing call returned to the
    /// moment the loop got the element (0 when the element was there first).
    var latencies: [Double] {
        lock.withLock {
            (1...commits).compactMap { k in
                guard let start = returned[k], let end = arrived[k] else { return nil }
                return end > start ? Double(end - start) / 1e6 : 0
            }
        }
    }
}
