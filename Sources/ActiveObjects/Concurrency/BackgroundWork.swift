import Foundation

/// Where the SQLite work of async calls (and of live queries' fetches) runs: Dispatch queues
/// of the database's own, so that no thread of Swift's cooperative pool ever blocks waiting
/// for a connection or running a query.
///
/// - Writes run on one serial queue, in submission order: the writer serves one thread at a
///   time anyway, so a second thread would only wait for the first.
/// - Reads run at most ``width`` at once (the number of reader connections), one serial queue
///   per slot: more would only wait in the reader pool, and past the busy timeout fail; jobs
///   beyond the width wait here, in order, without holding a thread.
///
/// Every queue is a serial queue of its own, never Dispatch's global concurrent queues: the
/// work blocks (on disk, on SQLite's locks, on the writer another thread holds), and serial
/// queues get a thread of their own when they need one ("overcommit"), while the global
/// concurrent queues share a few threads per core with the whole process — blocked jobs of one
/// database there would delay every other database's, and everyone else's, work.
///
/// After ``stop()`` jobs are refused (the database closed); jobs already queued still run, and
/// find the database closed.
final class BackgroundWork: @unchecked Sendable {
    // Safety of @unchecked Sendable: `idleReadQueues`, `pending`, `head` and `stopped` are
    // guarded by `lock`; the queues are Dispatch's.
    private let writes = DispatchQueue(label: "ActiveObjects.writes")
    private let readQueues: [DispatchQueue]
    /// How many reads may run at once.
    let width: Int
    private let lock = NSLock()
    /// The read queues with no job running, by index.
    private var idleReadQueues: [Int]
    private var pending: [@Sendable () -> Void] = []
    private var head = 0
    private var stopped = false

    init(readWidth: Int) {
        width = max(1, readWidth)
        readQueues = (0..<width).map { DispatchQueue(label: "ActiveObjects.reads.\($0)") }
        idleReadQueues = Array((0..<width).reversed())
    }

    /// Queues a write; false (and the job dropped) once stopped.
    func submitWrite(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard !lock.withLock({ stopped }) else { return false }
        writes.async(execute: job)
        return true
    }

    /// Queues a read; false (and the job dropped) once stopped.
    func submitRead(_ job: @escaping @Sendable () -> Void) -> Bool {
        enum Decision { case refused, queued, start(Int) }
        let decision: Decision = lock.withLock {
            guard !stopped else { return .refused }
            guard let queue = idleReadQueues.popLast() else {
                pending.append(job)
                return .queued
            }
            return .start(queue)
        }
        switch decision {
        case .refused: return false
        case .queued: return true
        case .start(let queue):
            readQueues[queue].async { [self] in runReads(first: job, on: queue) }
            return true
        }
    }

    /// Runs `first`, then queued reads while there are some, on read queue `queue` (which
    /// stays taken until none is left).
    private func runReads(first: @escaping @Sendable () -> Void, on queue: Int) {
        var job: (@Sendable () -> Void)? = first
        while let current = job {
            current()
            job = lock.withLock {
                guard head < pending.count else {
                    pending.removeAll(keepingCapacity: true)
                    head = 0
                    idleReadQueues.append(queue)
                    return nil
                }
                let next = pending[head]
                head += 1
                // Under a steady load the queue may never drain: drop what already ran.
                if head >= 1024 && head * 2 >= pending.count {
                    pending.removeFirst(head)
                    head = 0
                }
                return next
            }
        }
    }

    /// Refuses new jobs from now on.
    func stop() {
        lock.withLock { stopped = true }
    }

    /// How many reads run right now (tests).
    var runningReads: Int { lock.withLock { width - idleReadQueues.count } }
}
