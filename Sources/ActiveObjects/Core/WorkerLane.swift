import Foundation

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
            // Named from inside: on Linux a name set before `start()` does not stick, and
            // names over 15 bytes are refused.
            Thread { [self] in
                Thread.current.name = name
                work()
            }.start()
        }
        condition.unlock()
        return true
    }

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
