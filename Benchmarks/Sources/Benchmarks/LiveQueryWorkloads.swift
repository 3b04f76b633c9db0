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

/// The child's commit period, in milliseconds.
let externalCommitPeriod = 20

@MainActor
func runLiveExternal(_ contender: ActiveObjectsConcurrentContender, path: String, sizes: Sizes,
                     into results: inout LiveResults) async throws {
    guard sizes.wants("live-external") else { return }
    let commits = sizes.externalCommits
    log("live-external: another process commits \(commits) times, every \(externalCommitPeriod) ms; ActiveObjects observes")
    let base = 3_000_000
    let process = Process()
    process.executableURL = URL(fileURLWithPath: currentExecutablePath())
    process.arguments = ["live-writer", path, String(commits), String(externalCommitPeriod), String(base)]
    let pipe = Pipe()
    process.standardOutput = pipe
    let arrivals: [Int: Int64] = try await withWatchdog(seconds: 20 + Double(commits * externalCommitPeriod) / 1000, "live-external") {
        var arrivals: [Int: Int64] = [:]
        var first = true
        for try await items in Item.all.order(by: "id").limit(100).values() {
            let now = systemMonotonicNanoseconds()
            if first {
                first = false
                try process.run()   // the observation runs: start committing
                continue
            }
            let k = items[0].intA - base
            if (1...commits).contains(k), arrivals[k] == nil { arrivals[k] = now }
            if k == commits { break }
        }
        return arrivals
    }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    while process.isRunning { try await Task.sleep(for: .milliseconds(5)) }
    guard process.terminationStatus == 0 else { throw BenchError("live-writer exited with \(process.terminationStatus)") }
    var samples: [Double] = []
    for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count == 3, fields[0] == "COMMIT", let k = Int(fields[1]), let committed = Int64(fields[2]) else { continue }
        if let arrived = arrivals[k] { samples.append(Double(max(0, arrived - committed)) / 1e6) }
    }
    results.external = samples
    results.externalCommits = commits
    log("  live-external: done")
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
    for mode in ["FULL", "NORMAL"] {
        let commits = mode == "FULL" ? sizes.overheadCommitsFull : sizes.overheadCommitsNormal
        log("live-overhead: \(commits) one-row commits, synchronous = \(mode), with \(otherTableCount) observations of other tables vs none, \(sizes.overheadRounds) rounds")
        for contender in contenders { try contender.execute("PRAGMA synchronous = \(mode)") }
        for round in 0..<(sizes.warmups + sizes.overheadRounds) {
            for k in contenders.indices {
                let contender = contenders[(k + round) % contenders.count]
                let commit = try contender.makeCommitter()
                // ABBA: none, observed, observed, none, none, …
                for observed in (round % 2 == 0 ? [false, true] : [true, false]) {
                    var tasks: [Task<Void, Error>] = []
                    if observed {
                        let started = LockedBox(0)
                        tasks = contender.observeOtherTables(otherTableCount, started: started)
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
                    var entry = results.overhead[contender.name, default: [:]][mode, default: OverheadSamples()]
                    if observed {
                        entry.observed.append(perCommit)
                        entry.observedCPU.append(cpu)
                    } else {
                        entry.none.append(perCommit)
                        entry.noneCPU.append(cpu)
                    }
                    results.overhead[contender.name, default: [:]][mode] = entry
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

func printLiveLines(_ results: LiveResults) {
    for name in results.contenders {
        if let samples = results.latency[name] { print("LIVE live-latency \(name) \(LatencySummary(samples).fields)") }
    }
    if results.externalCommits > 0 {
        print("LIVE live-external ActiveObjects \(LatencySummary(results.external).fields) commits=\(results.externalCommits)")
    }
    for name in results.contenders {
        for mode in ["FULL", "NORMAL"] {
            guard let entry = results.overhead[name]?[mode], !entry.none.isEmpty else { continue }
            let none = medianOf(entry.none), observed = medianOf(entry.observed)
            let noneCPU = medianOf(entry.noneCPU), observedCPU = medianOf(entry.observedCPU)
            print("OVERHEAD live-overhead \(name) synchronous=\(mode) none_us=\(format(none, decimals: 1)) observed_us=\(format(observed, decimals: 1)) overhead_pct=\(format((observed / none - 1) * 100, decimals: 1)) cpu_none_us=\(format(noneCPU, decimals: 1)) cpu_observed_us=\(format(observedCPU, decimals: 1)) cpu_overhead_pct=\(format((observedCPU / noneCPU - 1) * 100, decimals: 1))")
        }
    }
}

func printLiveTables(_ results: LiveResults, sizes: Sizes) {
    if !results.latency.isEmpty || results.externalCommits > 0 {
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
        if results.externalCommits > 0 {
            let s = LatencySummary(results.external)
            let verdict = s.count > 0 && s.p95 <= externalLatencyTargetMilliseconds ? "p95 ≤ 100 ms: yes" : "p95 ≤ 100 ms: NO"
            print("| live-external (another process, 100 rows) | ActiveObjects | \(format(s.p50, decimals: 3)) | \(format(s.p95, decimals: 3)) | \(format(s.max, decimals: 2)) | \(s.count) / \(results.externalCommits) | \(verdict) |")
            print("| live-external | GRDB-pool | – | – | – | – | not supported (GRDB documents that observation ignores other processes) |")
        }
    }
    guard !results.overhead.isEmpty else { return }
    print("")
    print("Cost of a one-row commit with \(otherTableCount) live observations of other tables vs none (µs per commit: wall clock of the committing thread, and CPU time of the whole process, every thread included; medians of \(sizes.overheadRounds) rounds, alternating; the verdict uses the CPU time, which load on the machine disturbs less):")
    print("")
    print("| contender | synchronous | commits/round | none µs | observed µs | overhead | CPU none µs | CPU observed µs | CPU overhead | ≤ 5 % |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name in results.contenders {
        for mode in ["FULL", "NORMAL"] {
            guard let entry = results.overhead[name]?[mode], !entry.none.isEmpty else { continue }
            let none = medianOf(entry.none), observed = medianOf(entry.observed)
            let percent = (observed / none - 1) * 100
            let noneCPU = medianOf(entry.noneCPU), observedCPU = medianOf(entry.observedCPU)
            let cpuPercent = (observedCPU / noneCPU - 1) * 100
            let commits = mode == "FULL" ? sizes.overheadCommitsFull : sizes.overheadCommitsNormal
            let verdict = name == "ActiveObjects" ? (cpuPercent <= overheadTargetPercent ? "yes" : "NO") : "–"
            print("| \(name) | \(mode) | \(commits) | \(format(none, decimals: 1)) | \(format(observed, decimals: 1)) | \(format(percent, decimals: 1)) % | \(format(noneCPU, decimals: 1)) | \(format(observedCPU, decimals: 1)) | \(format(cpuPercent, decimals: 1)) % | \(verdict) |")
        }
    }
}
