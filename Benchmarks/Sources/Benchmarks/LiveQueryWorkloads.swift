import ActiveObjects
import CSQLiteBench
import Foundation

// Issue 13 item 5: live queries.
//
// - live-latency: commit → element in the same process, for an observed 100-row result
//   (ActiveObjects `Query.values()` vs GRDB `ValueObservation`): a thread commits one changed
//   row, the main actor's `for try await` loop receives the new result.
// - live-external: the same commits made by ANOTHER process (a child of this executable,
//   writing with the sqlite3 C API), received by ActiveObjects' observation. GRDB documents
//   that its observation does not notice other processes' writes: not measured.
// - live-overhead: the cost of a one-row commit with 10 live observations of OTHER tables vs
//   none, with SQLite's default `synchronous = FULL` (ActiveObjects' setting: a commit waits
//   for fsync) and with `NORMAL` (GRDB's setting in WAL mode: no fsync per commit).
//
// Issue 22: live results that keep their objects (`Query.changes()`), beside `values()` and
// GRDB's `ValueObservation`, each consumer iterating in a plain task:
//
// - live-changes: commit → element for observed 100-row and 10,000-row results, timed from
//   just before the committing call starts (GRDB's observation fetches the new result inside
//   `pool.write`, before it returns) and from its return, with the call's own duration.
// - live-commit-cost: the committing call's duration with 10 live results of the first
//   1,000 rows of the same table vs none, synchronous FULL and NORMAL (does observing slow
//   the writer?).
// - live-changes-external: another process's commits → `changes()` elements (100 and 10,000
//   rows; `values()` of 10,000 rows beside it, live-external has its 100 rows).
// - live-overhead: also with 10 `changes()` of other tables (`ActiveObjects-changes`).

struct LiveResults {
    /// live-latency samples (ms) per contender.
    var latency: [String: [Double]] = [:]
    /// live-external samples (ms), and how many commits the child made.
    var external: [Double] = []
    var externalCommits = 0
    /// live-overhead: per contender and synchronous mode, µs per commit (wall clock, and CPU
    /// time of the whole process), one sample per round.
    var overhead: [String: [String: OverheadSamples]] = [:]
    var contenders: [String] = []
    /// live-overhead: the rows of its tables, in order (the contenders, then
    /// `ActiveObjects-changes`).
    var overheadNames: [String] = []

    /// Issue 22's workloads: the variants (contender and API) measured, in order, with their
    /// titles in the tables.
    var variants: [String] = []
    var variantTitles: [String: String] = [:]
    /// live-changes: per variant and result size, the samples of the timed run.
    var changes: [String: [Int: ChangeSamples]] = [:]
    var changesCommits = 0
    /// live-commit-cost: per variant and synchronous mode, the committing calls' durations.
    var commitCost: [String: [String: CommitCostSamples]] = [:]
    /// live-changes-external: per variant and result size, latencies (ms).
    var changesExternal: [String: [Int: [Double]]] = [:]

    mutating func note(_ variants: [LiveVariant]) {
        for variant in variants where variantTitles[variant.name] == nil {
            self.variants.append(variant.name)
            variantTitles[variant.name] = variant.title
        }
    }
}

/// live-changes: one run's samples, in ms.
struct ChangeSamples {
    /// From just before the committing call started to the element's arrival.
    var fromStart: [Double]
    /// From the committing call's return to the element's arrival.
    var fromReturn: [Double]
    /// The committing calls' durations.
    var calls: [Double]
    /// From the start of the loop to its first element (the current result, read whole).
    var firstElement: Double
}

/// live-commit-cost: the committing calls' durations (ms) without and with live results.
struct CommitCostSamples {
    var none: [Double] = []
    var observed: [Double] = []
    /// Per round, the median with live results ÷ the mean of the medians without, before and
    /// after it.
    var roundRatios: [Double] = []
    /// Per round, the median without live results after ÷ before (an A/A comparison: the noise).
    var noneRatios: [Double] = []
    /// Elements that never reached every live result (commits whose element went missing).
    var missing = 0
    var commitsPerRound = 0
}

/// Runs `body` as a task that is cancelled after `seconds`, so that a stuck observation ends
/// the workload with an error instead of hanging the run.
@MainActor
func withWatchdog<T: Sendable>(seconds: Double, _ what: String, _ body: @escaping @MainActor () async throws -> T) async throws -> T {
    let task = Task { @MainActor in try await body() }
    let watchdog = Task {
        try await Task.sleep(for: .seconds(seconds))
        task.cancel()
    }
    defer { watchdog.cancel() }
    do {
        return try await task.value
    } catch is CancellationError {
        throw BenchError("\(what): no result within \(Int(seconds)) s")
    }
}

@MainActor
func runLiveLatency(_ contenders: [LiveContender], sizes: Sizes, into results: inout LiveResults) async throws {
    guard sizes.wants("live-latency") else { return }
    log("live-latency: \(sizes.liveCommits) commits → elements of an observed 100-row result, per contender")
    for round in 0..<(sizes.warmups + 1) {
        for contender in contenders {
            let tracker = LiveTracker(commits: sizes.liveCommits, base: 2_000_000 + 100_000 * round)
            let committer = BenchThread(name: "bench committer") {
                let commit = try contender.makeCommitter()
                try tracker.commitAll(commit)
            }
            try await withWatchdog(seconds: 10 + Double(sizes.liveCommits) * 0.05, "live-latency \(contender.name)") {
                try await contender.observeFirstRows(tracker)
            }
            try committer.join()
            if round >= sizes.warmups { results.latency[contender.name] = tracker.latencies }
        }
    }
    log("  live-latency: done")
}

/// live-changes: commit → element for each result size and variant, consumers in plain tasks.
@MainActor
func runLiveChanges(_ contenders: [LiveContender], sizes: Sizes, into results: inout LiveResults) async throws {
    guard sizes.wants("live-changes") else { return }
    let variants = liveVariants(contenders, withNormal: true)
    results.note(variants)
    results.changesCommits = sizes.liveCommits
    log("live-changes: \(sizes.liveCommits) commits → elements of observed \(sizes.liveChangesRows.map(String.init).joined(separator: " and "))-row results, per contender and API, in plain tasks")
    var run = 0
    for rows in sizes.liveChangesRows {
        for round in 0..<(sizes.warmups + 1) {
            // A warm-up round needs fewer commits (GRDB reads 10,000 rows inside each).
            let commits = round < sizes.warmups ? min(sizes.liveCommits, 20) : sizes.liveCommits
            for variant in variants {
                run += 1
                let contender = variant.contender, api = variant.api
                // The WAL written from its start again (its file no longer grows: with FULL, an
                // fsync that grows the file costs the file system's journal, 2 ms against 0.3 here).
                try contender.execute("PRAGMA wal_checkpoint(RESTART)")
                if let synchronous = variant.synchronous { try contender.execute("PRAGMA synchronous = \(synchronous)") }
                defer { if variant.synchronous != nil { try? contender.execute("PRAGMA synchronous = \(defaultSynchronous(contender))") } }
                let tracker = LiveTracker(commits: commits, base: 4_000_000 + 100_000 * run)
                let committer = BenchThread(name: "bench committer") {
                    let commit = try contender.makeCommitter()
                    try tracker.commitAll(commit)
                }
                let start = monotonicNanoseconds()
                try await withWatchdog(seconds: 10 + Double(commits) * 0.1, "live-changes \(variant.name) \(rows) rows") {
                    try await inPlainTask { try await contender.follow(api, rows: rows, sink: tracker, observer: 0) }
                }
                try committer.join()
                if round >= sizes.warmups {
                    results.changes[variant.name, default: [:]][rows] = ChangeSamples(
                        fromStart: tracker.latenciesFromStart, fromReturn: tracker.latencies, calls: tracker.callDurations,
                        firstElement: tracker.firstElementNanoseconds.map { Double($0 &- start) / 1e6 } ?? .nan)
                }
            }
        }
    }
    log("  live-changes: done")
}

/// How many live results live-commit-cost puts on the committed table.
let commitCostResultCount = 10
/// live-commit-cost: the commits start at least this far apart (ns), with or without live
/// results, so that both halves give the disk the same rhythm (with `synchronous = FULL`, an
/// fsync right after another waits for the file system's journal: the pace alone changes the
/// call's duration).
let commitCostPeriod: UInt64 = 4_000_000

/// live-commit-cost: the committing call's duration with ``commitCostResultCount`` live
/// results of the first ``Sizes/commitCostRows`` rows of `item` vs none. Each round runs
/// three halves back to back: none, observed, none (the change: observed ÷ the mean of the
/// two; the noise: how far the two without differ). Every commit changes a row of every live
/// result; the next waits for their elements (and 1 ms), so that what the live results do
/// after a commit never overlaps the next commit beyond what the commit itself started.
@MainActor
func runLiveCommitCost(_ contenders: [LiveContender], sizes: Sizes, into results: inout LiveResults) async throws {
    guard sizes.wants("live-commit-cost") else { return }
    let variants = liveVariants(contenders)
    results.note(variants)
    let rows = sizes.commitCostRows
    log("live-commit-cost: \(sizes.commitCostCommits) one-row commits (values() and GRDB-pool a quarter), synchronous = FULL and NORMAL, with \(commitCostResultCount) live results of \(rows) rows of the same table vs none, \(sizes.commitCostRounds) rounds")
    defer { for contender in contenders { try? contender.execute("PRAGMA synchronous = \(defaultSynchronous(contender))") } }
    var run = 0
    for mode in ["FULL", "NORMAL"] {
        for contender in contenders { try contender.execute("PRAGMA synchronous = \(mode)") }
        // One warm-up, before the first mode.
        let warmups = mode == "FULL" ? sizes.warmups : 0
        for round in 0..<(warmups + sizes.commitCostRounds) {
            for k in variants.indices {
                let variant = variants[(k + round) % variants.count]
                let contender = variant.contender, api = variant.api
                // The variants that read 10 × the whole result after each commit: a quarter of
                // the commits (each waits for ten full reads); a warm-up: a quarter of that.
                var commits = variant.refetches ? sizes.commitCostCommits / 4 : sizes.commitCostCommits
                if round < warmups { commits /= 4 }
                commits = max(2, commits)
                try contender.execute("PRAGMA wal_checkpoint(RESTART)")   // as in live-changes
                var medians: [Double] = []
                for observed in [false, true, false] {
                    run += 1
                    let observers = observed ? commitCostResultCount : 0
                    let tracker = LiveTracker(commits: commits, base: 6_000_000 + 10_000 * run, observers: observers)
                    let tasks = (0..<observers).map { observer in
                        Task.detached { try await contender.follow(api, rows: rows, sink: tracker, observer: observer) }
                    }
                    let deadline = monotonicNanoseconds() + 20_000_000_000
                    while !tracker.following {
                        guard monotonicNanoseconds() < deadline else {
                            for task in tasks { task.cancel() }
                            throw BenchError("live-commit-cost \(variant.name): the live results did not start")
                        }
                        try await Task.sleep(for: .milliseconds(1))
                    }
                    let committer = BenchThread(name: "bench committer") {
                        let commit = try contender.makeCommitter()
                        try tracker.commitAll(period: commitCostPeriod, commit)
                    }
                    try await withWatchdog(seconds: 10 + Double(commits) * 2.5, "live-commit-cost \(variant.name)") {
                        try await withTaskCancellationHandler {
                            for task in tasks { try await task.value }
                        } onCancel: {
                            for task in tasks { task.cancel() }
                        }
                    }
                    try committer.join()
                    guard round >= warmups else { continue }
                    medians.append(medianOf(tracker.callDurations))
                    var entry = results.commitCost[variant.name, default: [:]][mode, default: CommitCostSamples()]
                    entry.commitsPerRound = commits
                    if observed {
                        entry.observed += tracker.callDurations
                        entry.missing += commits - tracker.latencies.count
                    } else {
                        entry.none += tracker.callDurations
                    }
                    results.commitCost[variant.name, default: [:]][mode] = entry
                }
                if medians.count == 3 {
                    let none = (medians[0] + medians[2]) / 2
                    results.commitCost[variant.name]?[mode]?.roundRatios.append(medians[1] / none)
                    results.commitCost[variant.name]?[mode]?.noneRatios.append(medians[2] / medians[0])
                }
            }
        }
    }
    log("  live-commit-cost: done")
}

/// The child's commit period, in milliseconds.
let externalCommitPeriod = 20

@MainActor
func runLiveExternal(_ contender: ActiveObjectsConcurrentContender, path: String, sizes: Sizes,
                     into results: inout LiveResults) async throws {
    guard sizes.wants("live-external") else { return }
    let commits = sizes.externalCommits
    log("live-external: another process commits \(commits) times, every \(externalCommitPeriod) ms; ActiveObjects observes")
    results.external = try await externalCommitLatencies(path: path, commits: commits, base: 3_000_000, "live-external") { @MainActor arrivals in
        for try await items in Item.all.order(by: "id").limit(100).values() {
            if arrivals.received(marker: items[0].intA, observer: 0) { break }
        }
    }
    results.externalCommits = commits
    log("  live-external: done")
}

/// live-changes-external: the same, followed by `changes()` in a plain task, for 100 and
/// 10,000 rows, and by `values()` for 10,000 rows (live-external has its 100 rows).
@MainActor
func runLiveChangesExternal(_ contender: ActiveObjectsConcurrentContender, path: String, sizes: Sizes,
                            into results: inout LiveResults) async throws {
    guard sizes.wants("live-changes-external") else { return }
    let commits = sizes.externalCommits
    let rows = sizes.liveChangesRows
    log("live-changes-external: another process commits \(commits) times, every \(externalCommitPeriod) ms; changes() of \(rows) rows and values() of \(rows.last ?? 0) rows follow")
    let runs: [(LiveAPI, Int)] = rows.map { (LiveAPI.changes, $0) } + (rows.last.map { [(LiveAPI.values, $0)] } ?? [])
    results.note(runs.map { LiveVariant(contender: contender, api: $0.0) })
    results.externalCommits = commits
    for (index, (api, count)) in runs.enumerated() {
        let variant = LiveVariant(contender: contender, api: api)
        let samples = try await externalCommitLatencies(path: path, commits: commits, base: 3_100_000 + 100_000 * index,
                                                        "live-changes-external \(variant.name) \(count) rows") { arrivals in
            try await contender.follow(api, rows: count, sink: arrivals, observer: 0)
        }
        results.changesExternal[variant.name, default: [:]][count] = samples
    }
    log("  live-changes-external: done")
}

/// Where a loop following a result meets the other process's commits: the moment each
/// marker's element arrived (`CLOCK_MONOTONIC`, the clock the child prints).
final class ExternalArrivals: LiveSink, @unchecked Sendable {
    // Safety of @unchecked Sendable: `arrivals` and `sawFirst` are only touched under `lock`.
    let commits: Int
    let base: Int
    private let lock = NSLock()
    private var arrivals: [Int: Int64] = [:]
    private var sawFirst = false

    init(commits: Int, base: Int) {
        self.commits = commits
        self.base = base
    }

    func received(marker: Int, observer: Int) -> Bool {
        let now = systemMonotonicNanoseconds()
        let k = marker - base
        return lock.withLock {
            if !sawFirst {
                sawFirst = true
                return false
            }
            if (1...commits).contains(k), arrivals[k] == nil { arrivals[k] = now }
            return k == commits
        }
    }

    /// Whether the loop got its first element (the current result): it follows.
    var following: Bool { lock.withLock { sawFirst } }

    func arrival(_ k: Int) -> Int64? { lock.withLock { arrivals[k] } }
}

/// Starts `follow` in a plain task (it may hop to an actor of its own); once it has its first
/// element, starts the child process (`live-writer`), which commits `commits` times; returns
/// the latencies (ms) from each commit's return in the child to its element's arrival.
@MainActor
func externalCommitLatencies(path: String, commits: Int, base: Int, _ what: String,
                             follow: @escaping @Sendable (ExternalArrivals) async throws -> Void) async throws -> [Double] {
    let arrivals = ExternalArrivals(commits: commits, base: base)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: currentExecutablePath())
    process.arguments = ["live-writer", path, String(commits), String(externalCommitPeriod), String(base)]
    let pipe = Pipe()
    process.standardOutput = pipe
    try await withWatchdog(seconds: 20 + Double(commits * externalCommitPeriod) / 1000, what) {
        let task = Task.detached { try await follow(arrivals) }
        try await withTaskCancellationHandler {
            while !arrivals.following { try await Task.sleep(for: .milliseconds(1)) }
            try process.run()   // the observation runs: start committing
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    while process.isRunning { try await Task.sleep(for: .milliseconds(5)) }
    guard process.terminationStatus == 0 else { throw BenchError("live-writer exited with \(process.terminationStatus)") }
    var samples: [Double] = []
    for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count == 3, fields[0] == "COMMIT", let k = Int(fields[1]), let committed = Int64(fields[2]) else { continue }
        if let arrived = arrivals.arrival(k) { samples.append(Double(max(0, arrived - committed)) / 1e6) }
    }
    return samples
}

/// The child side of live-external: commits `intA = base + k` into row 1 with the sqlite3 C
/// API, every `period` ms, printing `COMMIT k <CLOCK_MONOTONIC ns after the commit returned>`.
func runLiveWriter(path: String, commits: Int, period: Int, base: Int) throws {
    let connection = try RawConnection(path: path)
    defer { connection.close() }
    let statement = try connection.prepare("UPDATE item SET intA = ? WHERE id = 1")
    defer { sqlite3_finalize(statement) }
    var lines: [String] = []
    let start = monotonicNanoseconds()
    for k in 1...commits {
        sleepUntil(start + UInt64(k * period) * 1_000_000)
        sqlite3_bind_int64(statement, 1, Int64(base + k))
        guard sqlite3_step(statement) == SQLITE_DONE else { throw connection.error("live-writer") }
        sqlite3_reset(statement)
        lines.append("COMMIT \(k) \(systemMonotonicNanoseconds())")
    }
    print(lines.joined(separator: "\n"))
}

struct OverheadSamples {
    var none: [Double] = []
    var observed: [Double] = []
    var noneCPU: [Double] = []
    var observedCPU: [Double] = []
}

@MainActor
func runLiveOverhead(_ contenders: [LiveContender], sizes: Sizes, into results: inout LiveResults) async throws {
    guard sizes.wants("live-overhead") else { return }
    // Each contender with its first API (ActiveObjects: `Database.values(_:)`, GRDB:
    // `ValueObservation`), then ActiveObjects with `changes()` (issue 22).
    let variants = contenders.map { (name: $0.name, contender: $0, api: $0.liveAPIs[0]) }
        + contenders.filter { $0.liveAPIs.contains(.changes) }.map { (name: "\($0.name)-changes", contender: $0, api: LiveAPI.changes) }
    results.overheadNames = variants.map(\.name)
    for mode in ["FULL", "NORMAL"] {
        let commits = mode == "FULL" ? sizes.overheadCommitsFull : sizes.overheadCommitsNormal
        log("live-overhead: \(commits) one-row commits, synchronous = \(mode), with \(otherTableCount) observations of other tables vs none, \(sizes.overheadRounds) rounds")
        for contender in contenders { try contender.execute("PRAGMA synchronous = \(mode)") }
        for round in 0..<(sizes.warmups + sizes.overheadRounds) {
            for k in variants.indices {
                let (name, contender, api) = variants[(k + round) % variants.count]
                let commit = try contender.makeCommitter()
                // ABBA: none, observed, observed, none, none, …
                for observed in (round % 2 == 0 ? [false, true] : [true, false]) {
                    var tasks: [Task<Void, Error>] = []
                    if observed {
                        let started = LockedBox(0)
                        tasks = contender.observeOtherTables(otherTableCount, api: api, started: started)
                        let deadline = monotonicNanoseconds() + 10_000_000_000
                        while started.current < otherTableCount {
                            guard monotonicNanoseconds() < deadline else { throw BenchError("live-overhead: observations did not start") }
                            try await Task.sleep(for: .milliseconds(1))
                        }
                    }
                    let cpuStart = processCPUNanoseconds()
                    let (milliseconds, _) = try measure {
                        for i in 0..<commits { try commit(1_000_000 + i) }
                        return commits
                    }
                    let cpu = Double(processCPUNanoseconds() - cpuStart) / 1000 / Double(commits)
                    for task in tasks { task.cancel() }
                    for task in tasks { _ = try? await task.value }
                    guard round >= sizes.warmups else { continue }
                    let perCommit = milliseconds * 1000 / Double(commits)
                    var entry = results.overhead[name, default: [:]][mode, default: OverheadSamples()]
                    if observed {
                        entry.observed.append(perCommit)
                        entry.observedCPU.append(cpu)
                    } else {
                        entry.none.append(perCommit)
                        entry.noneCPU.append(cpu)
                    }
                    results.overhead[name, default: [:]][mode] = entry
                }
            }
        }
    }
    // Back to each library's own setting.
    for contender in contenders {
        try contender.execute("PRAGMA synchronous = \(contender.name == "GRDB-pool" ? "NORMAL" : "FULL")")
    }
    log("  live-overhead: done")
}

// MARK: Report

let liveLatencyTargetMilliseconds = 2.0
let externalLatencyTargetMilliseconds = 100.0
let overheadTargetPercent = 5.0
/// Issue 22: `changes()` from the committing call's start, against GRDB's p95 (100 rows: no
/// slower; 10,000 rows: at most a fifth), and ≤ 1 ms from the call's return (10,000 rows).
let changesLargeResultRows = 10_000
let changesLargeFractionOfGRDB = 0.2
let changesFromReturnTargetMilliseconds = 1.0
/// Issue 22: another process's commit → `changes()` element, p95.
let changesExternalTargetMilliseconds = 10.0
/// live-commit-cost: "the same time within noise": the median of the per-round ratios
/// (observed ÷ none) at most 1 + the A/A noise of the rounds without live results, or 1.05.
let commitCostTolerancePercent = 5.0

/// The name in the output lines of `changes()`, `values()` (issue 22's workloads).
let activeObjectsChanges = "ActiveObjects-changes"

func printLiveLines(_ results: LiveResults) {
    for name in results.contenders {
        if let samples = results.latency[name] { print("LIVE live-latency \(name) \(LatencySummary(samples).fields)") }
    }
    for name in results.variants {
        for (rows, samples) in (results.changes[name] ?? [:]).sorted(by: { $0.key < $1.key }) {
            print("LIVE live-changes \(name) rows=\(rows) measure=from-start \(LatencySummary(samples.fromStart).fields)")
            print("LIVE live-changes \(name) rows=\(rows) measure=from-return \(LatencySummary(samples.fromReturn).fields)")
            print("LIVE live-changes \(name) rows=\(rows) measure=call \(LatencySummary(samples.calls).fields)")
            print("LIVE live-changes \(name) rows=\(rows) measure=first-element ms=\(format(samples.firstElement, decimals: 3))")
        }
    }
    for mode in ["FULL", "NORMAL"] {
        for name in results.variants {
            guard let entry = results.commitCost[name]?[mode], !entry.none.isEmpty else { continue }
            print("LIVE live-commit-cost \(name) synchronous=\(mode) results=0 \(LatencySummary(entry.none).fields)")
            print("LIVE live-commit-cost \(name) synchronous=\(mode) results=\(commitCostResultCount) \(LatencySummary(entry.observed).fields) missing=\(entry.missing)")
        }
    }
    if results.externalCommits > 0, !results.external.isEmpty {
        print("LIVE live-external ActiveObjects \(LatencySummary(results.external).fields) commits=\(results.externalCommits)")
    }
    for name in results.variants {
        for (rows, samples) in (results.changesExternal[name] ?? [:]).sorted(by: { $0.key < $1.key }) {
            print("LIVE live-changes-external \(name) rows=\(rows) \(LatencySummary(samples).fields) commits=\(results.externalCommits)")
        }
    }
    for name in results.overheadNames {
        for mode in ["FULL", "NORMAL"] {
            guard let entry = results.overhead[name]?[mode], !entry.none.isEmpty else { continue }
            let none = medianOf(entry.none), observed = medianOf(entry.observed)
            let noneCPU = medianOf(entry.noneCPU), observedCPU = medianOf(entry.observedCPU)
            print("OVERHEAD live-overhead \(name) synchronous=\(mode) none_us=\(format(none, decimals: 1)) observed_us=\(format(observed, decimals: 1)) overhead_pct=\(format((observed / none - 1) * 100, decimals: 1)) cpu_none_us=\(format(noneCPU, decimals: 1)) cpu_observed_us=\(format(observedCPU, decimals: 1)) cpu_overhead_pct=\(format((observedCPU / noneCPU - 1) * 100, decimals: 1))")
        }
    }
}

func printLiveTables(_ results: LiveResults, sizes: Sizes) {
    if !results.latency.isEmpty || (results.externalCommits > 0 && !results.external.isEmpty) {
        print("")
        print("Live queries: commit → element latency (from the committing call's return to the `for try await` body on the main actor; GRDB takes its fetch's snapshot inside `pool.write`, before it returns):")
        print("")
        print("| workload | contender | p50 ms | p95 ms | max ms | elements / commits | target |")
        print("|---|---|---:|---:|---:|---:|---|")
        for name in results.contenders {
            guard let samples = results.latency[name] else { continue }
            let s = LatencySummary(samples)
            let verdict = name == "ActiveObjects" ? (s.p95 <= liveLatencyTargetMilliseconds ? "p95 ≤ 2 ms: yes" : "p95 ≤ 2 ms: NO") : "–"
            print("| live-latency (same process, 100 rows) | \(name) | \(format(s.p50, decimals: 3)) | \(format(s.p95, decimals: 3)) | \(format(s.max, decimals: 2)) | \(s.count) / \(sizes.liveCommits) | \(verdict) |")
        }
        if results.externalCommits > 0, !results.external.isEmpty {
            let s = LatencySummary(results.external)
            let verdict = s.count > 0 && s.p95 <= externalLatencyTargetMilliseconds ? "p95 ≤ 100 ms: yes" : "p95 ≤ 100 ms: NO"
            print("| live-external (another process, 100 rows) | ActiveObjects | \(format(s.p50, decimals: 3)) | \(format(s.p95, decimals: 3)) | \(format(s.max, decimals: 2)) | \(s.count) / \(results.externalCommits) | \(verdict) |")
            print("| live-external | GRDB-pool | – | – | – | – | not supported (GRDB documents that observation ignores other processes) |")
        }
    }
    printChangesTables(results, sizes: sizes)
    guard !results.overhead.isEmpty else { return }
    print("")
    print("Cost of a one-row commit with \(otherTableCount) live observations of other tables vs none (µs per commit: wall clock of the committing thread, and CPU time of the whole process, every thread included; medians of \(sizes.overheadRounds) rounds, alternating; the verdict uses the CPU time, which load on the machine disturbs less; ActiveObjects: `Database.values(_:)`, ActiveObjects-changes: `Query.changes()` of a model per table):")
    print("")
    print("| contender | synchronous | commits/round | none µs | observed µs | overhead | CPU none µs | CPU observed µs | CPU overhead | ≤ 5 % |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name in results.overheadNames {
        for mode in ["FULL", "NORMAL"] {
            guard let entry = results.overhead[name]?[mode], !entry.none.isEmpty else { continue }
            let none = medianOf(entry.none), observed = medianOf(entry.observed)
            let percent = (observed / none - 1) * 100
            let noneCPU = medianOf(entry.noneCPU), observedCPU = medianOf(entry.observedCPU)
            let cpuPercent = (observedCPU / noneCPU - 1) * 100
            let commits = mode == "FULL" ? sizes.overheadCommitsFull : sizes.overheadCommitsNormal
            let verdict = name.hasPrefix("ActiveObjects") ? (cpuPercent <= overheadTargetPercent ? "yes" : "NO") : "–"
            print("| \(name) | \(mode) | \(commits) | \(format(none, decimals: 1)) | \(format(observed, decimals: 1)) | \(format(percent, decimals: 1)) % | \(format(noneCPU, decimals: 1)) | \(format(observedCPU, decimals: 1)) | \(format(cpuPercent, decimals: 1)) % | \(verdict) |")
        }
    }
}

/// Issue 22's tables: `changes()` beside `values()` and GRDB's `ValueObservation`.
func printChangesTables(_ results: LiveResults, sizes: Sizes) {
    func title(_ name: String) -> String { results.variantTitles[name] ?? name }
    func ms(_ value: Double) -> String { format(value, decimals: 3) }

    if !results.changes.isEmpty {
        print("")
        print("Live results that keep their objects (issue 22): commit → element, one row UPDATEd per commit (ActiveObjects: `save()` of a loaded object, autocommit, its default synchronous FULL: an fsync in each commit; GRDB: `update(_:columns:)` in `pool.write`, its default synchronous NORMAL; `changes()` also with NORMAL, the fsync aside), each after the previous commit's element and a 1 ms pause, \(results.changesCommits) commits; every consumer iterates in a plain task (`Task.detached`). Timed from just before the committing call starts (GRDB's observation fetches the new result inside `pool.write`) and from its return; first element: from the loop's start to the current result; ms:")
        print("")
        print("| result | contender | start → element p50 | p95 | return → element p50 | p95 | call p50 | call p95 | max (from start) | p95 from start ÷ GRDB's | elements / commits | first element | target |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        let sizesMeasured = Set(results.changes.values.flatMap(\.keys)).sorted()
        for rows in sizesMeasured {
            let grdb = results.variants.first { $0.hasPrefix("GRDB") }.flatMap { results.changes[$0]?[rows] }
                .map { LatencySummary($0.fromStart).p95 }
            for name in results.variants {
                guard let samples = results.changes[name]?[rows] else { continue }
                let start = LatencySummary(samples.fromStart), back = LatencySummary(samples.fromReturn)
                let call = LatencySummary(samples.calls)
                let ratio = grdb.map { format(start.p95 / $0, decimals: 2) + "×" } ?? "–"
                var verdict = "–"
                if name.hasPrefix(activeObjectsChanges) {
                    var parts: [String] = []
                    if rows >= changesLargeResultRows {
                        let bound = grdb.map { $0 * changesLargeFractionOfGRDB }
                        parts.append(bound.map { "p95 from start ≤ GRDB's ÷ 5 (\(ms($0))): " + (start.p95 <= $0 ? "yes" : "NO") }
                                     ?? "p95 from start ≤ GRDB's ÷ 5: – (GRDB not measured)")
                        parts.append("p95 from return ≤ 1 ms: " + (back.p95 <= changesFromReturnTargetMilliseconds ? "yes" : "NO"))
                    } else if rows <= 100 {
                        parts.append(grdb.map { "p95 from start ≤ GRDB's: " + (start.p95 <= $0 ? "yes" : "NO") }
                                     ?? "p95 from start ≤ GRDB's: – (GRDB not measured)")
                    }
                    if start.count < results.changesCommits { parts.append("elements MISSING") }
                    if !parts.isEmpty { verdict = parts.joined(separator: "; ") }
                }
                print("| \(rows) rows | \(title(name)) | \(ms(start.p50)) | \(ms(start.p95)) | \(ms(back.p50)) | \(ms(back.p95)) | \(ms(call.p50)) | \(ms(call.p95)) | \(format(start.max, decimals: 2)) | \(ratio) | \(start.count) / \(results.changesCommits) | \(format(samples.firstElement, decimals: 1)) | \(verdict) |")
            }
        }
    }

    if !results.commitCost.isEmpty {
        print("")
        print("Does observing slow the writer? The committing call (one-row UPDATE, as above) with \(commitCostResultCount) live results of the first \(sizes.commitCostRows) rows of the same table vs none, each commit after the previous commit's elements reached every live result and a 1 ms pause, and at least \(commitCostPeriod / 1_000_000) ms after the previous one started (the same rhythm with and without); each round runs none, observed, none back to back, \(sizes.commitCostRounds) rounds per synchronous mode; ms. Change: median over rounds of observed ÷ the mean of the two without; noise: median over rounds of how far the two without differ (A/A); same within noise when the change is at most the noise, or \(Int(commitCostTolerancePercent)) %:")
        print("")
        print("| contender | synchronous | commits/round | none p50 | none p95 | observed p50 | observed p95 | change | noise | elements missing | same within noise |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for mode in ["FULL", "NORMAL"] {
            for name in results.variants {
                guard let entry = results.commitCost[name]?[mode], !entry.none.isEmpty, !entry.observed.isEmpty else { continue }
                let none = LatencySummary(entry.none), observed = LatencySummary(entry.observed)
                let change = (entry.roundRatios.isEmpty ? observed.p50 / none.p50 : medianOf(entry.roundRatios)) - 1
                let noise = entry.noneRatios.isEmpty ? 0 : medianOf(entry.noneRatios.map { abs($0 - 1) })
                let same = change <= max(noise, commitCostTolerancePercent / 100)
                let verdict = name == activeObjectsChanges ? (same ? "yes" : "NO") : (same ? "(yes)" : "(no)")
                print("| \(title(name)) | \(mode) | \(entry.commitsPerRound) | \(ms(none.p50)) | \(ms(none.p95)) | \(ms(observed.p50)) | \(ms(observed.p95)) | \(format(change * 100, decimals: 1)) % | \(format(noise * 100, decimals: 1)) % | \(entry.missing) | \(verdict) |")
            }
        }
    }

    if !results.changesExternal.isEmpty {
        print("")
        print("Another process's commit → element (the child commits every \(externalCommitPeriod) ms with the sqlite3 C API, \(results.externalCommits) commits; from its commit's return, CLOCK_MONOTONIC, to the loop body in a plain task; live-external above: `values()` of 100 rows on the main actor); ms:")
        print("")
        print("| result | contender | p50 | p95 | max | elements / commits | target |")
        print("|---|---|---:|---:|---:|---:|---|")
        for name in results.variants {
            for (rows, samples) in (results.changesExternal[name] ?? [:]).sorted(by: { $0.key < $1.key }) {
                let s = LatencySummary(samples)
                let verdict = name == activeObjectsChanges
                    ? "p95 ≤ 10 ms: " + (s.count > 0 && s.p95 <= changesExternalTargetMilliseconds ? "yes" : "NO") : "–"
                print("| \(rows) rows | \(title(name)) | \(ms(s.p50)) | \(ms(s.p95)) | \(format(s.max, decimals: 2)) | \(s.count) / \(results.externalCommits) | \(verdict) |")
            }
        }
    }
}
