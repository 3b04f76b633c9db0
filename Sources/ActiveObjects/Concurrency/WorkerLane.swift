import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A few threads of our own that run the SQLite work of async calls, so that no thread of
/// Swift's cooperative pool ever blocks waiting for a connection or running a query.
///
/// Threads start when jobs arrive (up to `maximumThreads`), sleep on a condition variable
/// while idle (no CPU), and end after `idleTimeout` seconds without work or when the lane is
/// stopped. Jobs run in the order they were submitted.
final class WorkerLane: @unchecked Sendable {
    // Safety of @unchecked Sendable: all mutable state is guarded by `condition`'s lock.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    private var threadCount = 0
    private var idleCount = 0
    private var stopped = false
    let name: String
    let maximumThreads: Int
    private let idleTimeout: TimeInterval

    init(name: String, maximumThreads: Int, idleTimeout: TimeInterval = 10) {
        self.name = name
        self.maximumThreads = max(1, maximumThreads)
        self.idleTimeout = idleTimeout
    }

    /// Queues `job`; returns false (and drops it) once the lane is stopped.
    @discardableResult
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        guard !stopped else {
            condition.unlock()
            return false
        }
        jobs.append(job)
        // Wake an idle thread for each waiting job; start threads for the rest.
        if jobs.count - head <= idleCount {
            condition.signal()
        } else if threadCount < maximumThreads {
            threadCount += 1
            Self.startThread(named: name) { [self] in work() }
        }
        condition.unlock()
        return true
    }

    /// Starts a thread of our own named `name` (at most 15 bytes on Linux).
    static func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
        Thread {
            nameCurrentThread(name)
            body()
        }.start()
    }

    /// Names the calling thread (debuggers, `top -H`, `/proc/…/comm`). On Linux the name goes
    /// to the system thread directly: Foundation's `Thread.name`, set as a thread starts, can
    /// miss it (it applies a name only once the `Thread` knows its system thread, which
    /// `start()` records after the thread may already run), and the thread would keep the name
    /// of the thread that started it.
    static func nameCurrentThread(_ name: String) {
        Thread.current.name = name
        #if canImport(Glibc)
        if let setName = systemSetThreadName {
            _ = String(decoding: name.utf8.prefix(15), as: UTF8.self).withCString { setName(pthread_self(), $0) }
        }
        #endif
    }

    #if canImport(Glibc)
    /// glibc's `pthread_setname_np`, which the Glibc module does not export (it needs
    /// `_GNU_SOURCE`): looked up once at run time.
    private static let systemSetThreadName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = {
        guard let symbol = dlsym(nil, "pthread_setname_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
    }()
    #endif

    /// Lets the threads finish the queued jobs, then end. Later submissions are refused.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// How many threads are running (tests and diagnostics).
    var runningThreads: Int {
        condition.lock()
        defer { condition.unlock() }
        return threadCount
    }

    private func work() {
        condition.lock()
        while true {
            if head < jobs.count {
                let job = jobs[head]
                head += 1
                if head == jobs.count {
                    jobs.removeAll(keepingCapacity: true)
                    head = 0
                }
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            if stopped { break }
            idleCount += 1
            let woken = condition.wait(until: Date(timeIntervalSinceNow: idleTimeout))
            idleCount -= 1
            if !woken && head >= jobs.count { break }
        }
        threadCount -= 1
        condition.unlock()
    }
}
