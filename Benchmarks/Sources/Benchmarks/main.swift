import Foundation

// ActiveObjects benchmarks.
//
//   Benchmarks [--quick] [--rounds N] [--no-memory]   timed workloads, then the memory walks
//              [--only W,…]   workloads: insert, insert-all, fetch-all, find-id, each, northwind,
//                             northwind-text, date-parse, read-threads, read-latency,
//                             read-latency-async, live-latency, live-external, live-overhead,
//                             live-changes, live-commit-cost, live-changes-external,
//                             observe-edit, observe-plain, sync-capture, sync-hub, sync-idle,
//                             memory-each, memory-cursor, memory-update; and, only when named
//                             here, search and search-insert (full-text search, issue 25)
//              [--contenders raw-C,ActiveObjects,GRDB-pool,@Observable,…] [--warmups N]   (subsets, e.g. to profile)
//              [--svg PATH | --no-svg]               the ratio chart (default: Benchmarks/results.svg,
//                                                    written by full runs only)
//              [--search-corpus PATH]                the search corpus kept in PATH between runs
//   Benchmarks [--quick] memory                        the memory workloads only
//   Benchmarks memory-child PATH CONTENDER each|cursor ROUNDS   (internal: one memory walk)
//   Benchmarks memory-update-child PATH CONTENDER      (internal: one update walk)
//   Benchmarks live-writer PATH COMMITS PERIOD_MS BASE (internal: the other process of live-external)
//
// stdout: one `BENCH <workload> <contender> <median_ms>` line per measurement, one
// `DATEPARSE <parser> <ns_per_string>` line per date parser, `BENCH observe-… ActiveObjects|@Observable
// <median_ms>` lines for the observation workloads, `THROUGHPUT`, `LATENCY`, `LIVE` and `OVERHEAD`
// lines for the concurrency and live-query workloads, `SYNC` and `IDLE` lines for the sync
// workloads (their `BENCH sync-capture …` lines too), `SEARCH` and `INSERT` lines for the search
// workloads, one `PEAKRSS …` line per memory workload,
// then markdown tables. Progress goes to stderr.

/// Where the chart goes by default: `results.svg` next to this package's Package.swift.
let defaultChartPath = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("results.svg").path

@MainActor
func run(_ arguments: [String]) async throws {
    switch arguments.first {
    case "memory-child":
        guard arguments.count == 5, let rounds = Int(arguments[4]) else {
            throw BenchError("usage: memory-child PATH CONTENDER each|cursor ROUNDS")
        }
        try runMemoryChild(path: arguments[1], contenderName: arguments[2], mode: arguments[3], rounds: rounds)
        return
    case "memory-update-child":
        guard arguments.count == 3 else { throw BenchError("usage: memory-update-child PATH CONTENDER") }
        try runMemoryUpdateChild(path: arguments[1], contenderName: arguments[2])
        return
    case "live-writer":
        guard arguments.count == 5, let commits = Int(arguments[2]), let period = Int(arguments[3]),
              let base = Int(arguments[4]) else {
            throw BenchError("usage: live-writer PATH COMMITS PERIOD_MS BASE")
        }
        try runLiveWriter(path: arguments[1], commits: commits, period: period, base: base)
        return
    default:
        break
    }

    var sizes = Sizes.full
    var memoryOnly = false
    var withMemory = true
    var chartPath: String?
    var noChart = false
    var index = 0
    while index < arguments.count {
        switch arguments[index] {
        case "--quick": sizes = .quick
        case "memory": memoryOnly = true
        case "--no-memory": withMemory = false
        case "--rounds":
            index += 1
            guard index < arguments.count, let rounds = Int(arguments[index]), rounds >= 1 else {
                throw BenchError("--rounds needs a positive number")
            }
            sizes.rounds = rounds
            sizes.northwindRounds = rounds
            sizes.dateParseRounds = rounds
            sizes.overheadRounds = rounds
            sizes.commitCostRounds = rounds
            sizes.observeRounds = rounds
            sizes.syncHubRounds = rounds
            sizes.searchInsertRounds = rounds
        case "--only", "--contenders":
            index += 1
            guard index < arguments.count else { throw BenchError("\(arguments[index - 1]) needs a list") }
            let list = Set(arguments[index].split(separator: ",").map(String.init))
            if arguments[index - 1] == "--only" { sizes.onlyWorkloads = list } else { sizes.onlyContenders = list }
        case "--warmups":
            index += 1
            guard index < arguments.count, let warmups = Int(arguments[index]), warmups >= 0 else {
                throw BenchError("--warmups needs a number")
            }
            sizes.warmups = warmups
        case "--svg":
            index += 1
            guard index < arguments.count else { throw BenchError("--svg needs a path") }
            chartPath = arguments[index]
        case "--no-svg": noChart = true
        case "--search-corpus":
            index += 1
            guard index < arguments.count else { throw BenchError("--search-corpus needs a path") }
            sizes.searchCorpusPath = arguments[index]
        case let other:
            throw BenchError("unknown argument \(other); usage: Benchmarks [--quick] [--rounds N] [--warmups N] [--only W,…] [--contenders C,…] [--no-memory] [--svg PATH | --no-svg] [--search-corpus PATH] [memory]")
        }
        index += 1
    }

    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("activeobjects-bench-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    #if DEBUG
    log("warning: a debug build; run with `swift run -c release --package-path Benchmarks`")
    #endif
    let started = monotonicNanoseconds()
    var timed = TimedResults()
    var observation = ObservationResults()
    if !memoryOnly {
        log("rounds: \(sizes.warmups) warm-up + \(sizes.rounds) timed (Northwind \(sizes.northwindRounds), observation \(sizes.observeRounds)); medians reported")
        timed = try runTimedWorkloads(sizes: sizes, directory: directory)
        timed.report.printBenchLines()
        for result in timed.dateParsing {
            print("DATEPARSE \(result.name.replacingOccurrences(of: " ", with: "_")) \(format(result.nanosecondsPerString, decimals: 1))")
        }
        observation = try runObservationWorkloads(sizes: sizes, directory: directory)
        observation.report.printBenchLines()
    }
    let report = timed.report
    var concurrency = ConcurrencyResults()
    var live = LiveResults()
    if !memoryOnly {
        (concurrency, live) = try await runConcurrencySection(sizes: sizes, directory: directory)
        printConcurrencyLines(concurrency)
        printLiveLines(live)
    }
    var sync = SyncResults()
    if !memoryOnly {
        sync = try await runSyncSection(sizes: sizes, directory: directory)
        printSyncLines(sync)
    }
    var search = SearchResults()
    if !memoryOnly {
        search = try runSearchSection(sizes: sizes, directory: directory)
        printSearchLines(search)
    }
    var memory: [MemoryResult] = []
    if withMemory || memoryOnly {
        memory = try runMemoryWorkloads(sizes: sizes, directory: directory)
    }

    if !memoryOnly {
        if !report.workloads.isEmpty {
            print("")
            print("Medians, and ratio to \(referenceName) (rows: insert \(sizes.insertCount), table \(sizes.tableRows), lookups \(sizes.lookups)):")
            print("")
            report.printRatioTable(reference: referenceName, subject: subjectName)
            print("")
            print("northwind: \(sizes.northwindRows) Orders rows × 14 columns, model as activeobjects-gen writes it (Date?, Decimal?) vs C converting to the same types; northwind-text: natively read types (String? dates, Double?) vs C reading the same types.")
        }
        printObservationTable(observation, sizes: sizes)
        if !timed.dateParsing.isEmpty {
            print("")
            print("Date parsing alone (medians of \(sizes.dateParseRounds) rounds):")
            print("")
            printDateParseTable(timed.dateParsing, count: timed.dateStrings)
        }
        printConcurrencyTables(concurrency, sizes: sizes)
        printLiveTables(live, sizes: sizes)
        printSyncTables(sync, sizes: sizes)
        printSearchTables(search, sizes: sizes)
        // The chart: by default only from a full run, so that a quick look does not replace it.
        let isFullRun = sizes.insertCount == Sizes.full.insertCount && sizes.onlyWorkloads == nil
            && sizes.onlyContenders == nil
        if !noChart, let path = chartPath ?? (isFullRun ? defaultChartPath : nil), !report.workloads.isEmpty {
            let chart = RatioChart(
                report: report, reference: referenceName, subject: subjectName, targets: ratioTargets,
                captions: chartCaptions(sizes),
                title: "ActiveObjects vs hand-written C and GRDB: time relative to C",
                subtitle: "swift run -c release --package-path Benchmarks · medians, contenders alternating · \(runDescription())")
            try Data(chart.svg().utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            log("chart written to \(path)")
        }
    }
    if !memory.isEmpty {
        print("")
        print("Peak resident memory of a fresh process walking \(sizes.memoryRows) rows (memory-update: each row loaded, changed and saved, all in one transaction):")
        print("")
        printMemoryTable(memory)
    }
    log("total \(format(Double(monotonicNanoseconds() - started) / 1e9, decimals: 1)) s")
}

/// The caption under each workload of the chart.
func chartCaptions(_ sizes: Sizes) -> [String: String] {
    func thousands(_ n: Int) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.locale = Locale(identifier: "en_US")
        return formatter.string(from: NSNumber(value: n)) ?? String(n)
    }
    return [
        "insert": "\(thousands(sizes.insertCount)) saves\nin 1 transaction",
        "insert-all": "\(thousands(sizes.insertCount)) objects\ninsertAll (C: 1 by 1)",
        "fetch-all": "\(thousands(sizes.tableRows)) rows\ninto an array",
        "find-id": "\(thousands(sizes.lookups))\nfind(id:)",
        "each": "\(thousands(sizes.tableRows)) rows\nthrough a closure",
        "northwind": "\(thousands(sizes.northwindRows)) orders\nDate? Decimal?",
        "northwind-text": "\(thousands(sizes.northwindRows)) orders\nString? Double?",
    ]
}

/// The date, machine and SQLite version of this run, for the chart.
func runDescription() -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.dateFormat = "yyyy-MM-dd"
    let cores = ProcessInfo.processInfo.activeProcessorCount
    #if os(Linux)
    let system = "Linux"
    #else
    let system = "macOS"
    #endif
    return "\(formatter.string(from: Date())) · \(cores)-core \(system) · SQLite \(sqliteVersion())"
}

do {
    try await run(Array(CommandLine.arguments.dropFirst()))
} catch {
    log("error: \(error)")
    exit(1)
}
