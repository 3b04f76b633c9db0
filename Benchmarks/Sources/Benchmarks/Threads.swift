import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Threads for the concurrency workloads: plain threads started before the clock runs and
// released together, a locked box to collect what they report, and percentiles.

/// A value guarded by a lock, shared between the benchmark's threads.
final class LockedBox<Value>: @unchecked Sendable {
    // Safety of @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}

/// A thread of its own running `body` once; `join()` waits for it to end and rethrows what it threw.
final class BenchThread: @unchecked Sendable {
    // Safety of @unchecked Sendable: `error` is written by the thread before it signals `done`
    // and read only after `done` was waited for.
    private let done = DispatchSemaphore(value: 0)
    private var error: Error?

    init(name: String, _ body: @escaping @Sendable () throws -> Void) {
        let thread = Thread { [self] in
            do { try body() } catch { self.error = error }
            done.signal()
        }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
    }

    func join() throws {
        done.wait()
        if let error { throw error }
    }
}

/// Runs `body(index)` on `count` new threads at once and returns the wall-clock nanoseconds from
/// their common start to the end of the last one (thread creation is not timed), and the sum
/// of their results.
func runTogether(threads count: Int, _ body: @escaping @Sendable (Int) throws -> Int) throws -> (nanoseconds: UInt64, result: Int) {
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let results = LockedBox([Int](repeating: 0, count: count))
    var threads: [BenchThread] = []
    for index in 0..<count {
        threads.append(BenchThread(name: "bench \(index)") {
            ready.signal()
            go.wait()
            let result = try body(index)
            results.withLock { $0[index] = result }
        })
    }
    for _ in 0..<count { ready.wait() }
    let start = monotonicNanoseconds()
    for _ in 0..<count { go.signal() }
    var firstError: Error?
    for thread in threads {
        do { try thread.join() } catch { firstError = firstError ?? error }
    }
    let end = monotonicNanoseconds()
    if let firstError { throw firstError }
    return (end &- start, results.current.reduce(0, &+))
}

/// Sleeps the calling thread until the monotonic clock reads `deadline` (nanoseconds of
/// ``monotonicNanoseconds()``); returns at once when it is past.
func sleepUntil(_ deadline: UInt64) {
    let now = monotonicNanoseconds()
    guard deadline > now else { return }
    let delta = deadline - now
    var request = timespec(tv_sec: Int(delta / 1_000_000_000), tv_nsec: Int(delta % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// `CLOCK_MONOTONIC` in nanoseconds: the same clock in every process of the machine, for
/// latencies measured across processes.
func systemMonotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

/// CPU time of the whole process (every thread, user and system), in nanoseconds.
func processCPUNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

/// The `p`-th percentile (0…100) of `values`, nearest-rank.
func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count - 1, max(0, rank - 1))]
}

/// p50, p95, p99 and max of latency samples in milliseconds.
struct LatencySummary {
    let count: Int
    let p50: Double
    let p95: Double
    let p99: Double
    let max: Double

    init(_ samples: [Double]) {
        count = samples.count
        p50 = percentile(samples, 50)
        p95 = percentile(samples, 95)
        p99 = percentile(samples, 99)
        max = samples.max() ?? .nan
    }

    /// `p50=… p95=… p99=… max=… n=…`, milliseconds with 3 decimals.
    var fields: String {
        "p50=\(format(p50, decimals: 3)) p95=\(format(p95, decimals: 3)) p99=\(format(p99, decimals: 3)) max=\(format(max, decimals: 3)) n=\(count)"
    }
}
