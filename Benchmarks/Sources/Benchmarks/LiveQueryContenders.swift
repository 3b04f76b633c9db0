import ActiveObjects
import GRDB
import Foundation

// What the live-query workloads ask of a contender: observe the first 100 rows of `item`
// (ActiveObjects `Query.values()`, GRDB `ValueObservation.values(in:)`, both iterated with
// `for try await` on the main actor), observe other tables, and commit one changed row
// (ActiveObjects: `save()` of a loaded object, autocommit; GRDB: `update(_:columns:)` in
// `pool.write`, its documented way, a small transaction).
//
// The workloads of issue 22 compare the APIs that follow a result (``LiveAPI``): GRDB's
// `ValueObservation`, ActiveObjects' `Query.values()` (a fresh array of fresh objects after
// each commit) and `Query.changes()` (the same objects, updated in place), each iterated in a
// plain task (`Task.detached`, no actor), on the first N rows of `item`.

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

    /// The APIs this contender follows a result with (issue 22's workloads).
    var liveAPIs: [LiveAPI] { get }
    /// Follows the first `rows` rows of `item` by id with `api`, in the calling task (call it
    /// from a plain task), handing the `intA` of row 1 of each element to `sink` as observer
    /// number `observer`, until the sink says the run is over. Checks each element (its row
    /// count; with `changes()`, that row 1 stays the same object, updated in place).
    func follow(_ api: LiveAPI, rows: Int, sink: LiveSink, observer: Int) async throws
    /// Starts `count` observations with `api`, each of one `other<i>` table, each in a plain
    /// task, counting first elements in `started`. Cancel the tasks to end them.
    func observeOtherTables(_ count: Int, api: LiveAPI, started: LockedBox<Int>) -> [Task<Void, Error>]
}

/// How a live result is followed (issue 22's workloads).
enum LiveAPI: String, Sendable {
    /// GRDB's `ValueObservation.values(in:)` on the `DatabasePool`.
    case valueObservation = "ValueObservation"
    /// ActiveObjects' `Query.values()` (`Database.values(_:)` for the other tables): the query
    /// read again after each commit, fresh objects.
    case values = "values()"
    /// ActiveObjects' `Query.changes()`: the same objects, updated in place, only the changed
    /// rows read after a commit of this database.
    case changes = "changes()"
}

/// A contender and the API it follows a result with: one line of issue 22's tables.
struct LiveVariant: Sendable {
    let contender: LiveContender
    let api: LiveAPI
    /// `PRAGMA synchronous` for this variant's commits; nil: the library's own setting
    /// (``defaultSynchronous(_:)``).
    var synchronous: String? = nil
    /// The name in the output lines (no space): the contender's name for its only API
    /// (`GRDB-pool`), else `<contender>-<api>` (`ActiveObjects-values`, `ActiveObjects-changes`),
    /// with `-normal` for `synchronous = NORMAL`.
    var name: String {
        let base = contender.liveAPIs.count == 1 ? contender.name
            : "\(contender.name)-\(api.rawValue.replacingOccurrences(of: "()", with: ""))"
        return synchronous.map { "\(base)-\($0.lowercased())" } ?? base
    }
    /// The name in the tables: `GRDB-pool ValueObservation`, `ActiveObjects changes()`.
    var title: String {
        "\(contender.name) \(api.rawValue)" + (synchronous.map { " (synchronous \($0))" } ?? "")
    }
    /// Whether it reads the whole result again after each commit.
    var refetches: Bool { api != .changes }
}

/// Every (contender, API) pair of `contenders`, GRDB first, then ActiveObjects' `values()`
/// and `changes()` (and, `withNormal`, `changes()` with `synchronous = NORMAL`, GRDB's
/// setting: no fsync in the committing call).
func liveVariants(_ contenders: [LiveContender], withNormal: Bool = false) -> [LiveVariant] {
    var all: [LiveVariant] = []
    for contender in contenders {
        for api in contender.liveAPIs {
            all.append(LiveVariant(contender: contender, api: api))
            if withNormal, api == .changes, defaultSynchronous(contender) != "NORMAL" {
                all.append(LiveVariant(contender: contender, api: api, synchronous: "NORMAL"))
            }
        }
    }
    return all.filter { $0.contender.name.hasPrefix("GRDB") } + all.filter { !$0.contender.name.hasPrefix("GRDB") }
}

/// Each library's own `PRAGMA synchronous` in WAL mode: GRDB NORMAL, ActiveObjects FULL.
func defaultSynchronous(_ contender: ConcurrentContender) -> String {
    contender.name == "GRDB-pool" ? "NORMAL" : "FULL"
}

/// Runs `body` in a plain task (`Task.detached`, no actor), cancelled with the calling task.
func inPlainTask<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let task = Task.detached(operation: body)
    return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
}

/// What a following loop reports to: the marker (`intA` of row 1) of each element it received.
protocol LiveSink: Sendable {
    /// Observer `observer` got an element whose row 1 holds `marker`; true once the run is
    /// over for it (its loop may end).
    func received(marker: Int, observer: Int) -> Bool
}

// The models of the `other<i>` tables, for `changes()` (a query's table is its model's).
final class Other0: ActiveObject { override class var tableName: String { "other0" }; @ActiveObjects.Column var value: Int = 0 }
final class Other1: ActiveObject { override class var tableName: String { "other1" }; @ActiveObjects.Column var value: Int = 0 }
final class Other2: ActiveObject { override class var tableName: String { "other2" }; @ActiveObjects.Column var value: Int = 0 }
final class Other3: ActiveObject { override class var tableName: String { "other3" }; @ActiveObjects.Column var value: Int = 0 }
final class Other4: ActiveObject { override class var tableName: String { "other4" }; @ActiveObjects.Column var value: Int = 0 }
final class Other5: ActiveObject { override class var tableName: String { "other5" }; @ActiveObjects.Column var value: Int = 0 }
final class Other6: ActiveObject { override class var tableName: String { "other6" }; @ActiveObjects.Column var value: Int = 0 }
final class Other7: ActiveObject { override class var tableName: String { "other7" }; @ActiveObjects.Column var value: Int = 0 }
final class Other8: ActiveObject { override class var tableName: String { "other8" }; @ActiveObjects.Column var value: Int = 0 }
final class Other9: ActiveObject { override class var tableName: String { "other9" }; @ActiveObjects.Column var value: Int = 0 }

/// Follows every row of `model`'s table with `changes()` in a plain task, counting elements
/// in `started`.
func followOtherTable<Model: ActiveObject>(_ model: Model.Type, started: LockedBox<Int>) -> Task<Void, Error> {
    Task.detached {
        for try await _ in Model.all.changes() {
            started.withLock { $0 += 1 }
        }
    }
}

/// ``followOtherTable(_:started:)`` for `other<index>`.
func followOtherTable(_ index: Int, started: LockedBox<Int>) -> Task<Void, Error> {
    switch index {
    case 0: followOtherTable(Other0.self, started: started)
    case 1: followOtherTable(Other1.self, started: started)
    case 2: followOtherTable(Other2.self, started: started)
    case 3: followOtherTable(Other3.self, started: started)
    case 4: followOtherTable(Other4.self, started: started)
    case 5: followOtherTable(Other5.self, started: started)
    case 6: followOtherTable(Other6.self, started: started)
    case 7: followOtherTable(Other7.self, started: started)
    case 8: followOtherTable(Other8.self, started: started)
    default: followOtherTable(Other9.self, started: started)
    }
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

    var liveAPIs: [LiveAPI] { [.values, .changes] }

    func follow(_ api: LiveAPI, rows: Int, sink: LiveSink, observer: Int) async throws {
        let query = Item.all.order(by: "id").limit(rows)
        switch api {
        case .changes:
            var row1: Item?
            for try await change in query.changes() {
                let elements = change.elements
                guard elements.count == rows else { throw BenchError("live changes(): \(elements.count) rows, expected \(rows)") }
                let last = sink.received(marker: elements[0].intA, observer: observer)
                if let row1 {
                    // One row, one object: row 1 updated in place, nothing entered or left.
                    guard elements[0] === row1 else { throw BenchError("live changes(): row 1 is a new object") }
                    guard change.difference.isEmpty else {
                        throw BenchError("live changes(): \(change.difference.count) rows entered or left, expected none")
                    }
                    guard change.updated.count == 1, change.updated[0] === row1 else {
                        throw BenchError("live changes(): \(change.updated.count) objects updated, expected row 1 alone")
                    }
                } else {
                    guard change.difference.insertions.count == rows else {
                        throw BenchError("live changes(): the first change inserts \(change.difference.insertions.count) rows, expected \(rows)")
                    }
                    row1 = elements[0]
                }
                if last { break }
            }
        case .values:
            for try await items in query.values() {
                guard items.count == rows else { throw BenchError("live values(): \(items.count) rows, expected \(rows)") }
                if sink.received(marker: items[0].intA, observer: observer) { break }
            }
        case .valueObservation:
            throw BenchError("ActiveObjects has no ValueObservation")
        }
    }

    func observeOtherTables(_ count: Int, api: LiveAPI, started: LockedBox<Int>) -> [Task<Void, Error>] {
        switch api {
        case .changes: return (0..<count).map { followOtherTable($0, started: started) }
        default: return observeOtherTables(count, started: started)
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

    var liveAPIs: [LiveAPI] { [.valueObservation] }

    func follow(_ api: LiveAPI, rows: Int, sink: LiveSink, observer: Int) async throws {
        let observation = ValueObservation.tracking { db in
            try HandItem.order(Column("id")).limit(rows).fetchAll(db)
        }
        for try await records in observation.values(in: pool) {
            guard records.count == rows else { throw BenchError("live: \(records.count) rows, expected \(rows)") }
            if sink.received(marker: records[0].intA, observer: observer) { break }
        }
    }

    func observeOtherTables(_ count: Int, api: LiveAPI, started: LockedBox<Int>) -> [Task<Void, Error>] {
        observeOtherTables(count, started: started)
    }
}

/// One run of the commit → element workload: the committing thread and the observing loops
/// meet here. The committer waits for the element of its previous commit at every observer
/// (at most 2 s) before the next one, so every commit is its own transaction and no element is
/// coalesced away. With no observer, it only pauses between commits.
final class LiveTracker: LiveSink, @unchecked Sendable {
    // Safety of @unchecked Sendable: the arrays are only touched under `lock`.
    let commits: Int
    /// Markers are `base + 1 … base + commits` (the seeded values of intA stay below 2,000,000;
    /// each run has its own base, so that an element repeating an earlier run's state is not
    /// taken for one of this run's).
    let base: Int
    /// The loops following the result; an element has arrived when the last of them got it.
    let observers: Int
    private let lock = NSLock()
    private var started: [UInt64?]
    private var returned: [UInt64?]
    private var arrived: [UInt64?]
    private var arrivals: [Int]
    private var sawFirst: [Bool]
    private var firstElements = 0
    private var firstArrival: UInt64?
    private let acknowledged = DispatchSemaphore(value: 0)

    init(commits: Int, base: Int, observers: Int = 1) {
        self.commits = commits
        self.base = base
        self.observers = observers
        started = Array(repeating: nil, count: commits + 1)
        returned = Array(repeating: nil, count: commits + 1)
        arrived = Array(repeating: nil, count: commits + 1)
        arrivals = Array(repeating: 0, count: commits + 1)
        sawFirst = Array(repeating: false, count: max(observers, 1))
    }

    /// The observer got an element whose row 1 holds `marker`; true once the last commit's
    /// element arrived (the loop may end).
    func received(marker: Int) -> Bool {
        received(marker: marker, observer: 0)
    }

    func received(marker: Int, observer: Int) -> Bool {
        let now = monotonicNanoseconds()
        let k = marker - base
        let (signal, last): (Bool, Bool) = lock.withLock {
            if !sawFirst[observer] {
                sawFirst[observer] = true
                firstElements += 1
                if firstElements == observers { firstArrival = now }
                return (firstElements == observers, false)
            }
            guard (1...commits).contains(k) else { return (false, false) }
            arrivals[k] += 1
            guard arrivals[k] == observers else { return (false, k == commits) }
            arrived[k] = now
            return (true, k == commits)
        }
        if signal { acknowledged.signal() }
        return last
    }

    /// Whether every observer got its first element.
    var following: Bool { lock.withLock { firstElements == observers } }

    /// When the last observer got its first element (``monotonicNanoseconds()``).
    var firstElementNanoseconds: UInt64? { lock.withLock { firstArrival } }

    /// The committing side, on its own thread: waits for the first elements, then commits
    /// marker after marker, each after the previous one's elements (or 2 s) and a 1 ms pause,
    /// and at least `period` nanoseconds after the previous one started.
    func commitAll(period: UInt64 = 0, _ commit: (Int) throws -> Void) throws {
        var previous: UInt64 = 0
        for k in 1...commits {
            if observers > 0 { _ = acknowledged.wait(timeout: .now() + 2) }
            sleepUntil(max(monotonicNanoseconds() + 1_000_000, previous + period))
            let start = monotonicNanoseconds()
            previous = start
            try commit(base + k)
            let now = monotonicNanoseconds()
            lock.withLock {
                started[k] = start
                returned[k] = now
            }
        }
    }

    /// Commit → element latencies in ms: from the moment the committing call returned to the
    /// moment the loop got the element (0 when the element was there first).
    var latencies: [Double] { between(\.returned) }

    /// Commit → element latencies in ms, from the moment just before the committing call
    /// started (what GRDB's observation, which fetches inside `pool.write`, costs too).
    var latenciesFromStart: [Double] { between(\.started) }

    /// The committing calls' durations in ms (every commit, whether its element arrived or not).
    var callDurations: [Double] {
        lock.withLock {
            (1...commits).compactMap { k in
                guard let start = started[k], let end = returned[k] else { return nil }
                return Double(end - start) / 1e6
            }
        }
    }

    private func between(_ from: KeyPath<LiveTracker, [UInt64?]>) -> [Double] {
        lock.withLock {
            let starts = self[keyPath: from]
            return (1...commits).compactMap { k in
                guard let start = starts[k], let end = arrived[k] else { return nil }
                return end > start ? Double(end - start) / 1e6 : 0
            }
        }
    }
}
