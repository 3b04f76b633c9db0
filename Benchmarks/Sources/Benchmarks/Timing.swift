import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Timing, statistics, memory readings and the report.

/// Monotonic nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Runs `body` once and returns its duration in milliseconds and its result.
@inline(never)
func measure(_ body: () throws -> Int) rethrows -> (milliseconds: Double, result: Int) {
    let start = monotonicNanoseconds()
    let result = try body()
    let end = monotonicNanoseconds()
    return (Double(end &- start) / 1_000_000, result)
}

func medianOf(_ values: [Double]) -> Double {
    precondition(!values.isEmpty)
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The process's peak resident set size in MiB: `VmHWM` from /proc/self/status on Linux,
/// `ru_maxrss` elsewhere.
func peakResidentMiB() -> Double? {
    if let kib = procStatusKiB("VmHWM") { return kib / 1024 }
    #if canImport(Darwin)
    var usage = rusage()
    guard getrusage(RUSAGE_SELF, &usage) == 0 else { return nil }
    return Double(usage.ru_maxrss) / (1024 * 1024)   // bytes on Darwin
    #else
    return nil
    #endif
}

/// The process's current resident set size in MiB (`VmRSS`), Linux only.
func currentResidentMiB() -> Double? {
    procStatusKiB("VmRSS").map { $0 / 1024 }
}

private func procStatusKiB(_ key: String) -> Double? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if fields.count >= 2, let value = Double(fields[1]) { return value }
    }
    return nil
}

/// The samples of one (workload, contender) pair.
struct Measurement {
    let workload: String
    let contender: String
    var samples: [Double] = []
    var median: Double { medianOf(samples) }
}

/// The ratio targets (issue 16), for ActiveObjects against the raw reference.
let ratioTargets: [String: Double] = [
    "insert": 1.10,
    "insert-all": 1.0,
    "fetch-all": 1.10,
    "find-id": 1.10,
    "each": 1.15,
    "northwind": 1.15,
    "northwind-text": 1.15,
]

/// Collects measurements and prints the `BENCH` lines and the ratio table.
struct Report {
    private(set) var measurements: [Measurement] = []

    /// Fixes the order of the lines and columns (registration order).
    mutating func register(_ workload: String, _ contender: String) {
        if lookup(workload, contender) == nil {
            measurements.append(Measurement(workload: workload, contender: contender))
        }
    }

    mutating func record(_ workload: String, _ contender: String, _ milliseconds: Double) {
        if let index = measurements.firstIndex(where: { $0.workload == workload && $0.contender == contender }) {
            measurements[index].samples.append(milliseconds)
        } else {
            measurements.append(Measurement(workload: workload, contender: contender, samples: [milliseconds]))
        }
    }

    /// One line per measurement: `BENCH <workload> <contender> <median_ms>`.
    func printBenchLines() {
        for m in measurements where !m.samples.isEmpty {
            print("BENCH \(m.workload) \(m.contender) \(format(m.median, decimals: 3))")
        }
    }

    /// A markdown table: median ms and ratio to the reference for every contender, and the
    /// verdict for ActiveObjects (ratio target and faster than every GRDB contender).
    func printRatioTable(reference: String, subject: String) {
        let workloads = measurements.map(\.workload).uniqued()
        let contenders = measurements.map(\.contender).uniqued()
        var header = "| workload |"
        var rule = "|---|"
        for contender in contenders {
            header += " \(contender) |"
            rule += "---:|"
        }
        header += " target | \(subject) verdict |"
        rule += "---|---|"
        print(header)
        print(rule)
        for workload in workloads {
            guard let referenceMedian = lookup(workload, reference)?.median else { continue }
            var line = "| \(workload) |"
            for contender in contenders {
                guard let m = lookup(workload, contender) else { line += " – |"; continue }
                line += " \(format(m.median, decimals: 2)) ms (\(format(m.median / referenceMedian, decimals: 2))×) |"
            }
            let target = ratioTargets[workload]
            line += target.map { " ≤ \(format($0, decimals: 2))× |" } ?? " – |"
            if let subjectMedian = lookup(workload, subject)?.median {
                let ratio = subjectMedian / referenceMedian
                // Every GRDB contender measured (GRDB-Codable and GRDB-hand): "faster than GRDB"
                // means faster than each of them; otherwise the verdict names those it is not.
                let grdb = contenders.filter { $0.hasPrefix("GRDB") && lookup(workload, $0) != nil }
                let notBeaten = grdb.filter { subjectMedian >= lookup(workload, $0)!.median }
                let meetsRatio = target.map { ratio <= $0 } ?? true
                var verdict = meetsRatio ? "ratio ok" : "ratio MISSED"
                if !grdb.isEmpty {
                    verdict += notBeaten.isEmpty ? ", faster than GRDB" : ", NOT faster than \(notBeaten.joined(separator: " and "))"
                }
                line += " \(verdict) |"
            } else {
                line += " – |"
            }
            print(line)
        }
    }

    /// The workloads and contenders measured, in registration order.
    var workloads: [String] { measurements.filter { !$0.samples.isEmpty }.map(\.workload).uniqued() }
    var contenders: [String] { measurements.filter { !$0.samples.isEmpty }.map(\.contender).uniqued() }

    /// The median of one measurement, nil when it was not run.
    func median(_ workload: String, _ contender: String) -> Double? {
        guard let m = lookup(workload, contender), !m.samples.isEmpty else { return nil }
        return m.median
    }

    private func lookup(_ workload: String, _ contender: String) -> Measurement? {
        measurements.first { $0.workload == workload && $0.contender == contender }
    }
}

func format(_ value: Double, decimals: Int) -> String {
    String(format: "%.\(decimals)f", value)
}

extension Array where Element: Hashable {
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
