import Foundation

/// Where the SQLite work of async calls (and of live queries' fetches) runs: Dispatch queues
/// of the database's own, so that no thread of Swift's cooperative pool ever blocks waiting
/// for a connection or running a query.
///
/// - Writes run on one serial queue, in submission order: the writer serves one thread at a
///   time anyway, so a second thread would only wait for the first.
/// - Reads run on a concurrent queue, at most ``width`` at once (the number of reader
///   connections): more would only wait in the reader pool, and past the busy timeout fail;
///   jobs beyond the width wait here, in order, without holding a thread.
///
/// After ``stop()`` jobs are refused (the database closed); jobs already queued still run, and
/// find the database closed.
final class BackgroundWork: @unchecked Sendable {
    // Safety of @unchecked Sendable: `running`, `pending`, `head` and `stopped` are guarded by
    // `lock`; the queues are Dispatch's.
    private let writes = DispatchQueue(label: "ActiveObjects.writes")
    private let reads = DispatchQueue(label: "ActiveObjects.reads", attributes: .concurrent)
    /// How many reads may run at once.
    let width: Int
    private let lock = NSLock()
    private var running = 0
    private var pending: [@Sendable () -> Void] = []
    private var head = 0
    private var stopped = false

    init(readWidth: Int) {
        width = max(1, readWidth)
    }

    /// Queues a write; false (and the job dropped) once stopped.
    func submitWrite(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard !lock.withLock({ stopped }) else { return false }
        writes.async(execute: job)
        return true
    }

    /// Queues a read; false (and the job dropped) once stopped.
    func submitRead(_ job: @escaping @Sendable () -> Void) -> Bool {
        enum Decision { case refused, start, queued }
        let decision: Decision = lock.withLock {
            guard !stopped else { return .refused }
            guard running < width else {
                pending.append(job)
                return .queued
            }
            running += 1
            return .start
        }
        if decision == .start { reads.async { [self] in runReads(first: job) } }
        return decision != .refused
    }

    /// Runs `first`, then queued reads while there are some (this slot of the width stays
    /// taken until none is left).
    private func runReads(first: @escaping @Sendable () -> Void) {
        var job: (@Sendable () -> Void)? = first
        while let current = job {
            current()
            job = lock.withLock {
                guard head < pending.count else {
                    pending.removeAll(keepingCapacity: true)
                    head = 0
                    running -= 1
                    return nil
                }
                defer { head += 1 }
                return pending[head]
            }
        }
    }

    /// Refuses new jobs from now on.
    func stop() {
        lock.withLock { stopped = true }
    }

    /// How many reads run right now (tests).
    var runningReads: Int { lock.withLock { running } }
}
