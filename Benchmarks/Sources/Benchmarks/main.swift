import Foundation

// ActiveObjects benchmarks.
//
//   Benchmarks [--quick] [--rounds N] [--no-memory]   timed workloads, then the memory walks
//              [--only insert,fetch-all,find-id,each] [--contenders raw-C,ActiveObjects,…]
//              [--warmups N]                         (subsets, e.g. to profile one contender)
//   Benchmarks [--quick] memory                        the memory walks only
//   Benchmarks memory-child PATH CONTENDER each|cursor ROUNDS   (internal: one memory walk)
//
// stdout: one `BENCH <workload> <contender> <median_ms>` line per measurement, one
// `PEAKRSS …` line per memory walk, then markdown tables. Progress goes to stderr.

func run(_ arguments: [String]) throws {
    if arguments.first == "memory-child" {
        guard arguments.count == 5, let rounds = Int(arguments[4]) else {
            throw BenchError("usage: memory-child PATH CONTENDER each|cursor ROUNDS")
        }
        try runMemoryChild(path: arguments[1], contenderName: arguments[2], mode: arguments[3], rounds: rounds)
        return
    }

    var sizes = Sizes.full
    var memoryOnly = false
    var withMemory = true
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
        case let other:
            throw BenchError("unknown argument \(other); usage: Benchmarks [--quick] [--rounds N] [--warmups N] [--only W,…] [--contenders C,…] [--no-memory] [memory]")
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
    var report = Report()
    if !memoryOnly {
        log("rounds: \(sizes.warmups) warm-up + \(sizes.rounds) timed; medians reported")
        report = try runTimedWorkloads(sizes: sizes, directory: directory)
        report.printBenchLines()
    }
    var memory: [MemoryResult] = []
    if withMemory || memoryOnly {
        memory = try runMemoryWorkloads(sizes: sizes, directory: directory)
    }

    if !memoryOnly {
        print("")
        print("Medians, and ratio to \(referenceName) (rows: insert \(sizes.insertCount), table \(sizes.tableRows), lookups \(sizes.lookups)):")
        print("")
        report.printRatioTable(reference: referenceName, subject: subjectName)
    }
    if !memory.isEmpty {
        print("")
        print("Peak resident memory of a fresh process walking \(sizes.memoryRows) rows:")
        print("")
        printMemoryTable(memory)
    }
    log("total \(format(Double(monotonicNanoseconds() - started) / 1e9, decimals: 1)) s")
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
} catch {
    log("error: \(error)")
    exit(1)
}
