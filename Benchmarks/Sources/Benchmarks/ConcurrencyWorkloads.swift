import Foundation

// Issue 12 item 9: reads beside reads, and reads beside a long write.
//
// - read-threads: find(id:) throughput with 1, 2 and 4 threads reading at once, each thread
//   its own seeded ids (the same for every contender); per contender the 2-thread/1-thread and
//   4/1 ratios (median of the per-round ratios: the three thread counts run back to back).
// - read-latency: a find(id:) every 2 ms from one thread while another thread runs a
//   200,000-row write transaction; latency of each lookup call (p50, p99, max).
// - read-latency-async: the same, from `@MainActor` code with `try await` (see
//   LatencyAsync.swift).

/// The results of the concurrency workloads.
struct ConcurrencyResults {
    /// read-threads: finds per second, per contender and thread count, one sample per round.
    var throughput: [String: [Int: [Double]]] = [:]
    /// read-threads: per contender and thread count (2 or 4), the per-round ratio to 1 thread.
    var scaling: [String: [Int: [Double]]] = [:]
    /// read-threads: CPU time of the process per lookup (µs), per contender and thread count:
    /// what threads sharing one library cost each other (locks, shared cache lines), less
    /// sensitive than wall time to other work on the machine.
    var cpuPerFind: [String: [Int: [Double]]] = [:]
    /// Latency samples (ms) and the write transactions' durations (ms), per workload and contender.
    var latency: [String: [String: [Double]]] = [:]
    var writeMilliseconds: [String: [String: [Double]]] = [:]
    var contenders: [String] = []
}

let threadCounts = [1, 2, 4]

/// One seeded id list per thread (the same for every contender).
func threadIDs(count: Int, tableRows: Int) -> [[Int64]] {
    (0..<concurrencyThreadLimit).map { thread in
        var rng = SplitMix64(seed: 40_000 + UInt64(thread))
        return (0..<count).map { _ in Int64(1 + rng.next() % UInt64(tableRows)) }
    }
}

func runReadThroughput(_ contenders: [ConcurrentContender], sizes: Sizes, into results: inout ConcurrencyResults) throws {
    guard sizes.wants("read-threads") else { return }
    log("read-threads: \(sizes.threadLookups) find(id:) per thread, 1/2/4 threads")
    let ids = threadIDs(count: sizes.threadLookups, tableRows: sizes.tableRows)
    var expected: [String: Int] = [:]
    for round in 0..<(sizes.warmups + sizes.rounds) {
        for k in contenders.indices {
            let contender = contenders[(k + round) % contenders.count]
            let count = max(1, sizes.threadLookups / contender.lookupDivisor)
            let lists = ids.map { Array($0.prefix(count)) }
            var rates: [Int: Double] = [:]
            var cpu: [Int: Double] = [:]
            for threads in threadCounts {
                let cpuStart = processCPUNanoseconds()
                let (nanoseconds, checksum) = try runTogether(threads: threads) { index in
                    try contender.find(ids: lists[index], thread: index)
                }
                cpu[threads] = Double(processCPUNanoseconds() - cpuStart) / 1000 / Double(threads * count)
                let key = "\(threads)x\(count)"
                if let previous = expected[key], previous != checksum {
                    throw BenchError("read-threads: \(contender.name) computed checksum \(checksum) with \(threads) threads, expected \(previous)")
                }
                expected[key] = checksum
                rates[threads] = Double(threads * count) / (Double(nanoseconds) / 1e9)
            }
            guard round >= sizes.warmups else { continue }
            for threads in threadCounts {
                results.throughput[contender.name, default: [:]][threads, default: []].append(rates[threads]!)
                results.cpuPerFind[contender.name, default: [:]][threads, default: []].append(cpu[threads]!)
                if threads > 1 {
                    results.scaling[contender.name, default: [:]][threads, default: []].append(rates[threads]! / rates[1]!)
                }
            }
        }
    }
    log("  read-threads: done")
}

/// Resets the table to its populated rows (the write transactions append) and checkpoints.
func resetConcurrencyTable(_ contender: ConcurrentContender, rows: Int) throws {
    try contender.execute("DELETE FROM item WHERE id > \(rows)")
    try contender.execute("PRAGMA wal_checkpoint(TRUNCATE)")
}

/// A thread that runs one write transaction of `seeds`, started and waited for by a latency
/// workload; `isDone` turns true when it has committed.
final class LongWrite: @unchecked Sendable {
    // Safety of @unchecked Sendable: `thread` is set once in init; the rest is in locked boxes.
    let started = LockedBox(false)
    let done = LockedBox(false)
    let milliseconds = LockedBox(0.0)
    private var thread: BenchThread!

    init(_ contender: ConcurrentContender, seeds: [ItemSeed]) {
        thread = BenchThread(name: "bench writer") { [started, done, milliseconds] in
            started.withLock { $0 = true }
            defer { done.withLock { $0 = true } }
            let (ms, _) = try measure { try contender.writeTransaction(seeds) }
            milliseconds.withLock { $0 = ms }
        }
    }

    var isStarted: Bool { started.current }
    var isDone: Bool { done.current }

    func join() throws { try thread.join() }
}

/// The contenders that still need a round of a latency workload: every one for the first
/// `latencyRounds` rounds, then those with fewer than `latencyLookups` lookups.
func latencyContendersDue(_ names: [String], round: Int, sizes: Sizes, samples: [String: [Double]]) -> Set<String> {
    Set(names.filter { round < sizes.latencyRounds || (samples[$0]?.count ?? 0) < sizes.latencyLookups })
}

/// The lookup period of the latency workloads.
let latencyPeriodNanoseconds: UInt64 = 2_000_000

func runReadLatency(_ contenders: [ConcurrentContender], seeds: [ItemSeed], sizes: Sizes,
                    into results: inout ConcurrencyResults) throws {
    guard sizes.wants("read-latency") else { return }
    log("read-latency: find(id:) every 2 ms during a \(seeds.count)-row write transaction, until \(sizes.latencyLookups) lookups each")
    var rng = SplitMix64(seed: 0x1A7E)
    for round in 0..<sizes.latencyRoundLimit {
        let due = latencyContendersDue(contenders.map(\.name), round: round, sizes: sizes,
                                       samples: results.latency["read-latency"] ?? [:])
        if due.isEmpty { break }
        for k in contenders.indices where due.contains(contenders[(k + round) % contenders.count].name) {
            let contender = contenders[(k + round) % contenders.count]
            try resetConcurrencyTable(contender, rows: sizes.tableRows)
            _ = try contender.find(ids: [1], thread: 0)   // the reading connection is warm
            var samples: [Double] = []
            let write = LongWrite(contender, seeds: seeds)
            while !write.isStarted { sleepUntil(monotonicNanoseconds() + 50_000) }
            let base = monotonicNanoseconds()
            var tick: UInt64 = 0
            while true {
                sleepUntil(base + tick * latencyPeriodNanoseconds)
                tick += 1
                if write.isDone { break }
                let id = Int64(1 + rng.next() % UInt64(sizes.tableRows))
                let (ms, checksum) = try measure { try contender.find(ids: [id], thread: 0) }
                guard checksum != 0 else { throw BenchError("read-latency: \(contender.name) found no row \(id)") }
                samples.append(ms)
            }
            try write.join()
            results.latency["read-latency", default: [:]][contender.name, default: []] += samples
            results.writeMilliseconds["read-latency", default: [:]][contender.name, default: []].append(write.milliseconds.current)
        }
    }
    try contenders.forEach { try resetConcurrencyTable($0, rows: sizes.tableRows) }
    log("  read-latency: done")
}

/// The same as ``runReadLatency``, from `@MainActor` code: `try await` each lookup (the
/// contenders with an async form).
@MainActor
func runReadLatencyAsync(_ contenders: [ConcurrentContender], seeds: [ItemSeed], sizes: Sizes,
                         into results: inout ConcurrencyResults) async throws {
    guard sizes.wants("read-latency-async") else { return }
    let asyncContenders = contenders.filter { $0.name != "raw-C" }
    log("read-latency-async: try await find(id:) every 2 ms on the main actor during a \(seeds.count)-row write transaction, until \(sizes.latencyLookups) lookups each")
    var rng = SplitMix64(seed: 0xA5A5)
    let clock = ContinuousClock()
    for round in 0..<sizes.latencyRoundLimit {
        let due = latencyContendersDue(asyncContenders.map(\.name), round: round, sizes: sizes,
                                       samples: results.latency["read-latency-async"] ?? [:])
        if due.isEmpty { break }
        for k in asyncContenders.indices where due.contains(asyncContenders[(k + round) % asyncContenders.count].name) {
            let contender = asyncContenders[(k + round) % asyncContenders.count]
            try resetConcurrencyTable(contender, rows: sizes.tableRows)
            guard try await contender.findAsync(id: 1) != nil else { continue }   // warm
            var samples: [Double] = []
            let write = LongWrite(contender, seeds: seeds)
            while !write.isStarted { try await Task.sleep(for: .microseconds(50)) }
            var next = clock.now
            while true {
                try await clock.sleep(until: next)
                next = next.advanced(by: .nanoseconds(Int64(latencyPeriodNanoseconds)))
                if write.isDone { break }
                let id = Int64(1 + rng.next() % UInt64(sizes.tableRows))
                let start = monotonicNanoseconds()
                let checksum = try await contender.findAsync(id: id)
                samples.append(Double(monotonicNanoseconds() - start) / 1e6)
                guard checksum != 0 else { throw BenchError("read-latency-async: \(contender.name) found no row \(id)") }
            }
            try write.join()
            results.latency["read-latency-async", default: [:]][contender.name, default: []] += samples
            results.writeMilliseconds["read-latency-async", default: [:]][contender.name, default: []].append(write.milliseconds.current)
        }
    }
    try contenders.forEach { try resetConcurrencyTable($0, rows: sizes.tableRows) }
    log("  read-latency-async: done")
}

// MARK: Report

/// The read-threads target: ActiveObjects' 2T/1T ratio at least this times C's own.
let scalingTarget = 0.8
/// The read-latency target: p99 at most this many milliseconds.
let latencyTargetMilliseconds = 5.0

func printConcurrencyLines(_ results: ConcurrencyResults) {
    for name in results.contenders {
        guard let rates = results.throughput[name] else { continue }
        for threads in threadCounts {
            if let samples = rates[threads] {
                let cpu = results.cpuPerFind[name]?[threads].map(medianOf) ?? .nan
                print("THROUGHPUT read-threads \(name) threads=\(threads) finds_per_s=\(format(medianOf(samples), decimals: 0)) cpu_us_per_find=\(format(cpu, decimals: 2))")
            }
        }
    }
    for workload in ["read-latency", "read-latency-async"] {
        for name in results.contenders {
            guard let samples = results.latency[workload]?[name] else { continue }
            let write = results.writeMilliseconds[workload]?[name].map(medianOf) ?? .nan
            print("LATENCY \(workload) \(name) \(LatencySummary(samples).fields) write_ms=\(format(write, decimals: 1))")
        }
    }
}

func printConcurrencyTables(_ results: ConcurrencyResults, sizes: Sizes) {
    if !results.throughput.isEmpty {
        print("")
        print("Read throughput, find(id:) per second with 1, 2 and 4 threads reading at once (\(sizes.threadLookups) lookups per thread, GRDB-pool a quarter of them; medians of \(sizes.rounds) rounds; ratios: median of the per-round ratios):")
        print("")
        print("| contender | 1 thread | 2 threads | 4 threads | 2T/1T | 4T/1T | 2T/1T ÷ raw-C's | target |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        let reference = results.scaling["raw-C"]?[2].map(medianOf)
        for name in results.contenders {
            guard let rates = results.throughput[name], let scaling = results.scaling[name] else { continue }
            let two = medianOf(scaling[2]!), four = medianOf(scaling[4]!)
            var line = "| \(name) |"
            for threads in threadCounts { line += " \(format(medianOf(rates[threads]!) / 1000, decimals: 1))k |" }
            line += " \(format(two, decimals: 2))× | \(format(four, decimals: 2))× |"
            line += reference.map { " \(format(two / $0, decimals: 2)) |" } ?? " – |"
            if name == "ActiveObjects" {
                var verdict = reference.map { two / $0 >= scalingTarget ? "≥ 0.8× C's: ok" : "≥ 0.8× C's: MISSED" } ?? "–"
                if let grdb = results.scaling["GRDB-pool"]?[2].map(medianOf), let grdbRates = results.throughput["GRDB-pool"] {
                    let faster = threadCounts.allSatisfy { medianOf(rates[$0]!) > medianOf(grdbRates[$0]!) }
                    verdict += faster ? "; ahead of GRDB-pool at 1, 2 and 4 threads" : "; NOT ahead of GRDB-pool at every thread count"
                    verdict += " (2T/1T \(format(two, decimals: 2))× vs its \(format(grdb, decimals: 2))×)"
                }
                line += " \(verdict) |"
            } else {
                line += " – |"
            }
            print(line)
        }
    }
    for workload in ["read-latency", "read-latency-async"] {
        guard let byContender = results.latency[workload], !byContender.isEmpty else { continue }
        print("")
        print(workload == "read-latency"
            ? "Latency of a find(id:) every 2 ms from one thread while another thread runs a \(sizes.latencyRows)-row write transaction (rounds until \(sizes.latencyLookups) lookups each):"
            : "The same from @MainActor code, `try await` each lookup (rounds until \(sizes.latencyLookups) lookups each):")
        print("")
        print("| contender | p50 ms | p99 ms | max ms | lookups | write ms (median) | p99 ≤ \(Int(latencyTargetMilliseconds)) ms | p99 ≤ GRDB-pool's |")
        print("|---|---:|---:|---:|---:|---:|---|---|")
        let grdb = byContender["GRDB-pool"].map { LatencySummary($0).p99 }
        for name in results.contenders {
            guard let samples = byContender[name] else { continue }
            let summary = LatencySummary(samples)
            let write = results.writeMilliseconds[workload]?[name].map(medianOf) ?? .nan
            let versusGRDB = name == "ActiveObjects" ? grdb.map { summary.p99 <= $0 ? "yes" : "NO" } ?? "–" : "–"
            print("| \(name) | \(format(summary.p50, decimals: 3)) | \(format(summary.p99, decimals: 3)) | \(format(summary.max, decimals: 2)) | \(summary.count) | \(format(write, decimals: 0)) | \(summary.p99 <= latencyTargetMilliseconds ? "yes" : "NO") | \(versusGRDB) |")
        }
    }
}
