import Foundation

// The workloads of the issue, their sizes, the databases they run on, and the separate
// processes that measure peak memory.

struct Sizes {
    var insertCount = 50_000
    var tableRows = 100_000
    var lookups = 20_000
    var memoryRows = 1_000_000
    var rounds = 10
    var warmups = 1
    var memoryRounds = 3
    /// Rows of the Northwind `Orders` table, and timed rounds of its fetches (shorter than the
    /// others: more rounds for a stable median).
    var northwindRows = NorthwindData.rowCount
    var northwindRounds = 50
    /// Timed rounds of the date-parser micro-benchmark.
    var dateParseRounds = 10
    /// read-threads: find(id:) per thread and thread count.
    var threadLookups = 20_000
    /// read-latency(-async): rows of the long write transaction, and rounds.
    var latencyRows = 200_000
    /// Rounds of the latency workloads: at least this many, and then more for each contender
    /// until it has ``latencyLookups`` lookups (a contender whose write is quicker gets more
    /// rounds: ActiveObjects' write lasts about 0.4 s, GRDB's about 1.9 s, and a p99 of a few
    /// hundred lookups is decided by one hiccup of the machine).
    var latencyRounds = 5
    var latencyLookups = 8_000
    /// The most rounds a contender gets in a latency workload.
    var latencyRoundLimit = 60
    /// live-latency and live-external: commits observed.
    var liveCommits = 200
    var externalCommits = 100
    /// live-overhead: one-row commits per round (synchronous FULL, NORMAL), and rounds.
    var overheadCommitsFull = 100
    var overheadCommitsNormal = 2_000
    var overheadRounds = 20
    /// live-changes: the sizes of the observed results (commits: ``liveCommits``).
    var liveChangesRows = [100, 10_000]
    /// live-commit-cost: rows of each of the live results, commits per third of a round (the
    /// variants that read the whole result again, a quarter of them), and rounds per
    /// synchronous mode.
    var commitCostRows = 1_000
    var commitCostCommits = 40
    var commitCostRounds = 4
    /// observe-edit and observe-plain: objects edited per round, and timed rounds.
    var observeObjects = 10_000
    var observeRounds = 30
    /// sync-hub: notes made on device A that reach device B, and timed rounds (sync-capture:
    /// ``insertCount`` notes, ``rounds`` rounds).
    var syncHubRows = 10_000
    var syncHubRounds = 5
    /// sync-idle: seconds of each idle phase, and notes synchronized before.
    var syncIdleSeconds = 2.0
    var syncIdleRows = 1_000
    /// search (opt-in): articles in the corpus, queries, and timed rounds over them.
    var searchRows = 100_000
    var searchQueries = 500
    var searchRounds = 3
    /// search-insert (opt-in): rows per run, each its own transaction and 1,000 per
    /// transaction, and timed rounds.
    var searchInsertAutocommitRows = 200
    var searchInsertBatchRows = 3_000
    var searchInsertRounds = 5
    /// search: a corpus file kept between runs (`--search-corpus PATH`): reused when it holds
    /// this run's articles and schema, built there otherwise; nil: a temporary file.
    var searchCorpusPath: String?

    /// Only these workloads / contenders (for profiling one of them); nil = all.
    var onlyWorkloads: Set<String>?
    var onlyContenders: Set<String>?

    /// Whether the workload runs in this run.
    func wants(_ workload: String) -> Bool { onlyWorkloads?.contains(workload) ?? true }

    static let full = Sizes()
    static let quick = Sizes(insertCount: 5_000, tableRows: 10_000, lookups: 2_000, memoryRows: 100_000,
                             rounds: 3, warmups: 1, memoryRounds: 1, northwindRows: 2_000, northwindRounds: 3,
                             dateParseRounds: 2, threadLookups: 2_000, latencyRows: 20_000, latencyRounds: 1, latencyLookups: 0,
                             liveCommits: 20, externalCommits: 10, overheadCommitsFull: 20, overheadCommitsNormal: 200,
                             overheadRounds: 2, liveChangesRows: [100, 10_000], commitCostRows: 1_000,
                             commitCostCommits: 8, commitCostRounds: 2, observeObjects: 2_000, observeRounds: 3,
                             syncHubRows: 1_000, syncHubRounds: 1, syncIdleSeconds: 0.5, syncIdleRows: 100,
                             searchRows: 10_000, searchQueries: 100, searchRounds: 1,
                             searchInsertAutocommitRows: 40, searchInsertBatchRows: 1_000, searchInsertRounds: 2)
}

/// Contender names, in the order of the report's columns. The first is the reference.
let contenderNames = ["raw-C", "ActiveObjects", "GRDB-Codable", "GRDB-hand"]
let referenceName = "raw-C"
let subjectName = "ActiveObjects"

func makeContender(_ name: String, path: String) throws -> Contender {
    switch name {
    case "raw-C": return try RawContender(path: path)
    case "ActiveObjects": return try ActiveObjectsContender(path: path)
    case "GRDB-Codable": return try GRDBContender<CodableItem>(name: name, path: path)
    case "GRDB-hand": return try GRDBContender<HandItem>(name: name, path: path)
    default: throw BenchError("unknown contender \(name)")
    }
}

/// Creates the tables in a new database file (with a connection of its own, closed after).
func createDatabase(at path: String) throws {
    let connection = try RawConnection(path: path)
    defer { connection.close() }
    try connection.execute(createItemTableSQL)
    try connection.execute(createOrdersTableSQL)
}

/// Empties the table, writes `count` seeded rows and checkpoints, so that every contender
/// reads the same rows from the same kind of file (main file, empty WAL).
func populateDatabase(at path: String, count: Int, seed: UInt64) throws {
    let connection = try RawConnection(path: path)
    defer { connection.close() }
    try connection.execute("DELETE FROM item")
    try connection.populate(count: count, seed: seed)
    try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
}

// MARK: Timed workloads

/// Runs one workload: warm-up rounds, then timed rounds; in each round every contender runs
/// once, the starting contender rotating from round to round. `prepare` is not timed.
/// Every run's checksum must equal the first one.
func runWorkload(_ workload: String, contenders: [Contender], sizes: Sizes, rounds: Int? = nil,
                 report: inout Report,
                 prepare: (Contender) throws -> Void = { _ in },
                 body: (Contender) throws -> Int) throws {
    if let only = sizes.onlyWorkloads, !only.contains(workload) { return }
    for contender in contenders { report.register(workload, contender.name) }
    var expected: Int?
    for round in 0..<(sizes.warmups + (rounds ?? sizes.rounds)) {
        for k in contenders.indices {
            let contender = contenders[(k + round) % contenders.count]
            try prepare(contender)
            let (milliseconds, checksum) = try measure { try body(contender) }
            if let expected, expected != checksum {
                throw BenchError("\(workload): \(contender.name) computed checksum \(checksum), expected \(expected)")
            }
            expected = checksum
            if round >= sizes.warmups { report.record(workload, contender.name, milliseconds) }
        }
    }
    log("  \(workload): done")
}

/// What the timed part of a run measured.
struct TimedResults {
    var report = Report()
    var dateParsing: [DateParseResult] = []
    var dateStrings = 0
}

func runTimedWorkloads(sizes: Sizes, directory: URL) throws -> TimedResults {
    // The same data for every contender, generated before anything is timed.
    var rng = SplitMix64(seed: 0xA0B1_C2D3)
    let insertSeeds = (0..<sizes.insertCount).map { _ in ItemSeed.make(using: &rng) }
    var idRNG = SplitMix64(seed: 20_000)
    let ids = (0..<sizes.lookups).map { _ in Int64(1 + idRNG.next() % UInt64(sizes.tableRows)) }

    let names = contenderNames.filter { sizes.onlyContenders?.contains($0) ?? true }
    var paths: [String: String] = [:]
    for name in names {
        let path = directory.appendingPathComponent("\(name).sqlite").path
        try createDatabase(at: path)
        paths[name] = path
    }
    let contenders = try names.map { try makeContender($0, path: paths[$0]!) }
    defer { for contender in contenders { try? contender.close() } }

    var report = Report()
    var results = TimedResults()

    // The Northwind table, the same rows in every database; then a check, untimed, that every
    // contender reads the same values from it.
    let orders = NorthwindData.orders(count: sizes.northwindRows)
    if sizes.wants("northwind") || sizes.wants("northwind-text") {
        log("populating \(orders.count) Northwind orders per database")
        for name in names {
            let connection = try RawConnection(path: paths[name]!)
            defer { connection.close() }
            try connection.populateOrders(orders)
        }
        try checkOrderFields(contenders: contenders, count: orders.count)
    }

    // (1) insert: objects created and saved one by one, in one transaction.
    if sizes.wants("insert") { log("insert \(sizes.insertCount) objects, one transaction") }
    try runWorkload("insert", contenders: contenders, sizes: sizes, report: &report,
                    prepare: { contender in
                        try contender.execute("DELETE FROM item")
                        try contender.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    },
                    body: { try $0.insert(insertSeeds) })

    // (1b) insertAll: the same objects with the library's batch insert (multi-row INSERTs in one
    // transaction), against C and GRDB inserting one prepared statement at a time.
    if sizes.wants("insert-all") { log("insertAll \(sizes.insertCount) objects (C and GRDB: one statement at a time)") }
    try runWorkload("insert-all", contenders: contenders, sizes: sizes, report: &report,
                    prepare: { contender in
                        try contender.execute("DELETE FROM item")
                        try contender.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    },
                    body: { try $0.insertAll(insertSeeds) })

    // The read workloads share one populated table per contender.
    if ["fetch-all", "find-id", "each"].contains(where: sizes.wants) {
        log("populating \(sizes.tableRows) rows per database")
        for name in names { try populateDatabase(at: paths[name]!, count: sizes.tableRows, seed: 0x5EED) }
    }

    // (2) fetch all rows as objects, into an array.
    if sizes.wants("fetch-all") { log("fetch all \(sizes.tableRows) rows as objects") }
    try runWorkload("fetch-all", contenders: contenders, sizes: sizes, report: &report) { try $0.fetchAll() }

    // (3) find(id:) for random ids (the same ids, in the same order, for everyone).
    if sizes.wants("find-id") { log("find(id:) for \(sizes.lookups) random ids") }
    try runWorkload("find-id", contenders: contenders, sizes: sizes, report: &report) { try $0.find(ids: ids) }

    // (4) stream every row through a closure.
    if sizes.wants("each") { log("each over \(sizes.tableRows) rows") }
    try runWorkload("each", contenders: contenders, sizes: sizes, report: &report) { try $0.each() }

    // (5) the public yardstick: every Northwind order as an object, with the model
    // `activeobjects-gen` writes (Date?, Decimal?), then with dates as text (String?, Double?).
    if sizes.wants("northwind") {
        log("Northwind: fetch all \(orders.count) orders, Date? and Decimal? (\(sizes.northwindRounds) rounds)")
    }
    try runWorkload("northwind", contenders: contenders, sizes: sizes, rounds: sizes.northwindRounds,
                    report: &report) { try $0.fetchOrders() }
    if sizes.wants("northwind-text") { log("Northwind: fetch all \(orders.count) orders, String? and Double?") }
    try runWorkload("northwind-text", contenders: contenders, sizes: sizes, rounds: sizes.northwindRounds,
                    report: &report) { try $0.fetchOrdersAsText() }

    // (6) the date parser alone, on the orders' dates.
    if sizes.wants("date-parse") {
        log("date parsing: \(orders.count) strings, \(sizes.dateParseRounds) rounds")
        results.dateStrings = orders.count
        results.dateParsing = try runDateParseBenchmark(strings: orders.map(\.orderDate), sizes: sizes)
    }

    results.report = report
    return results
}

/// Checks, untimed, that every contender reads the same `Orders` values as the first one (the C
/// reference), in both variants. GRDB reads REAL into `Decimal` through `Decimal(Double)`, whose
/// digits differ from the stored value's for some amounts (0.07 reads as 0.07000000000000001024):
/// those are counted and reported, not refused.
func checkOrderFields(contenders: [Contender], count: Int) throws {
    guard let reference = contenders.first else { return }
    for text in [false, true] {
        let expected = try reference.orderFields(text: text)
        guard expected.count == count else {
            throw BenchError("Orders: \(reference.name) read \(expected.count) rows, expected \(count)")
        }
        for contender in contenders.dropFirst() {
            let actual = try contender.orderFields(text: text)
            guard actual.count == expected.count else {
                throw BenchError("Orders: \(contender.name) read \(actual.count) rows, \(reference.name) \(expected.count)")
            }
            var inexact = 0
            for (mine, theirs) in zip(actual, expected) where mine != theirs {
                if contender.name.hasPrefix("GRDB"), !text, differOnlyInFreightBelowACent(mine, theirs) {
                    inexact += 1
                    continue
                }
                throw BenchError("Orders: \(contender.name) read \(mine), \(reference.name) read \(theirs)")
            }
            if inexact > 0 {
                log("  note: \(contender.name) reads \(inexact) of \(count) freights as a Decimal other than the stored amount (Decimal(Double))")
            }
        }
    }
    log("  Orders: every contender read the same values (but for the freights noted)")
}

private func differOnlyInFreightBelowACent(_ a: [String], _ b: [String]) -> Bool {
    let freight = 7
    guard a.count == b.count, a.indices.allSatisfy({ $0 == freight || a[$0] == b[$0] }),
          a[freight].hasPrefix("decimal:"), b[freight].hasPrefix("decimal:"),
          let x = Double(a[freight].dropFirst(8)), let y = Double(b[freight].dropFirst(8)) else { return false }
    return abs(x - y) < 0.000_001
}

// MARK: Memory, in separate processes

/// A memory measurement reported by a child process.
struct MemoryResult {
    let workload: String
    let contender: String
    let milliseconds: Double
    let peakMiB: Double
    let baselineMiB: Double
}

/// The memory budget of the issue, for the whole process.
let memoryBudgetMiB = 64.0

/// Builds the big table once, then for each mode and contender runs this executable again
/// (`memory-child …`), so that each peak is that of a fresh process doing only that walk.
func runMemoryWorkloads(sizes: Sizes, directory: URL) throws -> [MemoryResult] {
    guard ["memory-each", "memory-cursor", "memory-update"].contains(where: sizes.wants) else { return [] }
    let path = directory.appendingPathComponent("memory.sqlite").path
    log("memory: populating \(sizes.memoryRows) rows")
    try createDatabase(at: path)
    try populateDatabase(at: path, count: sizes.memoryRows, seed: 0x3E3)

    var results: [MemoryResult] = []
    for mode in ["each", "cursor"] where sizes.wants("memory-\(mode)") {
        for name in contenderNames where sizes.onlyContenders?.contains(name) ?? true {
            let output = try runChild(["memory-child", path, name, mode, String(sizes.memoryRounds)])
            for line in output.split(separator: "\n") where line.hasPrefix("BENCH ") || line.hasPrefix("PEAKRSS ") {
                print(line)
                if let result = parsePeakLine(String(line)) { results.append(result) }
            }
        }
    }
    // Last: it changes the rows the walks read.
    results += try runMemoryUpdates(path: path, sizes: sizes)
    return results
}

/// `PEAKRSS <workload> <contender> <peak_MiB> baseline=<MiB> ms=<ms>`
func peakLine(_ r: MemoryResult) -> String {
    "PEAKRSS \(r.workload) \(r.contender) \(format(r.peakMiB, decimals: 1)) baseline=\(format(r.baselineMiB, decimals: 1)) ms=\(format(r.milliseconds, decimals: 1))"
}

func parsePeakLine(_ line: String) -> MemoryResult? {
    let f = line.split(separator: " ").map(String.init)
    guard f.count == 6, f[0] == "PEAKRSS", let peak = Double(f[3]),
          f[4].hasPrefix("baseline="), let baseline = Double(f[4].dropFirst(9)),
          f[5].hasPrefix("ms="), let ms = Double(f[5].dropFirst(3)) else { return nil }
    return MemoryResult(workload: f[1], contender: f[2], milliseconds: ms, peakMiB: peak, baselineMiB: baseline)
}

/// The child side: open one contender on the big table, walk it `rounds` times, print the
/// median time and the process's peak resident memory.
func runMemoryChild(path: String, contenderName: String, mode: String, rounds: Int) throws {
    let contender = try makeContender(contenderName, path: path)
    let baseline = peakResidentMiB() ?? 0
    var samples: [Double] = []
    for _ in 0..<max(1, rounds) {
        let (milliseconds, _) = try measure { mode == "cursor" ? try contender.cursor() : try contender.each() }
        samples.append(milliseconds)
    }
    try contender.close()
    let workload = "memory-\(mode)"
    let result = MemoryResult(workload: workload, contender: contenderName, milliseconds: medianOf(samples),
                              peakMiB: peakResidentMiB() ?? 0, baselineMiB: baseline)
    print("BENCH \(workload) \(contenderName) \(format(result.milliseconds, decimals: 3))")
    print(peakLine(result))
}

func runChild(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: currentExecutablePath())
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchError("child \(arguments) exited with \(process.terminationStatus)")
    }
    return String(decoding: data, as: UTF8.self)
}

func currentExecutablePath() -> String {
    if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        return resolved
    }
    return Bundle.main.executablePath ?? CommandLine.arguments[0]
}

func printMemoryTable(_ results: [MemoryResult]) {
    print("| walk | contender | median ms | peak RSS MiB (process) | before walking MiB | < \(Int(memoryBudgetMiB)) MiB |")
    print("|---|---|---:|---:|---:|---|")
    for r in results {
        let verdict = r.peakMiB < memoryBudgetMiB ? "yes" : "NO"
        print("| \(r.workload) | \(r.contender) | \(format(r.milliseconds, decimals: 1)) | \(format(r.peakMiB, decimals: 1)) | \(format(r.baselineMiB, decimals: 1)) | \(verdict) |")
    }
}

/// Progress goes to stderr, so that stdout holds only the results.
func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
