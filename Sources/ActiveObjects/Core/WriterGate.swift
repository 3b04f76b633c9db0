import CSQLite
import Foundation

/// Gives one thread at a time the writer connection, for as long as it needs it: one write,
/// a whole ``Database/transaction(_:)``, or a transaction begun with raw `BEGIN` (which keeps
/// the writer until the thread commits or rolls back).
///
/// Re-entrant for the thread that holds it (a transaction body saves objects, which take the
/// writer again). Another thread waits at most the busy timeout, then gets SQLite's `busy`
/// error — the same rule as for another process holding the file's write lock.
final class WriterGate: @unchecked Sendable {
    // Safety of @unchecked Sendable: `depth` and `pinned` are only touched by the thread
    // that holds `lock`; `owner` is read by any thread through atomic loads (a thread can
    // only ever see its own token there if it stored it itself).
    let connection: Connection
    private let lock = NSLock()
    private let owner: UnsafeMutablePointer<CLong>
    private var depth = 0
    /// True while a transaction begun with raw SQL keeps the writer on its thread.
    private var pinned = false

    init(connection: Connection) {
        self.connection = connection
        owner = UnsafeMutablePointer<CLong>.allocate(capacity: 1)
        owner.initialize(to: 0)
    }

    deinit { owner.deallocate() }

    /// Whether the thread with this token holds the writer.
    @inline(__always)
    func isHeld(by token: Int) -> Bool { activeobjects_atomic_load(owner) == token }

    /// Takes the writer for the thread `token` (again, if it already holds it).
    /// - Throws: ``DatabaseError`` `busy` after waiting `timeout` nanoseconds for another thread.
    func acquire(token: Int, timeout: Int64) throws {
        if isHeld(by: token) {
            depth += 1
            return
        }
        if !lock.try() {
            let deadline = Date(timeIntervalSinceNow: Double(max(0, timeout)) / 1e9)
            guard lock.lock(before: deadline) else {
                throw DatabaseError(
                    extendedResultCode: .busy,
                    message: "the database's writer stayed busy for longer than the busy timeout: a transaction held it on another thread (an async call runs on the database's own threads, so a raw BEGIN of the caller's thread counts too)")
            }
        }
        activeobjects_atomic_store(owner, token)
        depth = 1
    }

    /// Takes the writer only if no other thread holds it.
    func tryAcquire(token: Int) -> Bool {
        if isHeld(by: token) {
            depth += 1
            return true
        }
        guard lock.try() else { return false }
        activeobjects_atomic_store(owner, token)
        depth = 1
        return true
    }

    /// Gives the writer back (after the matching ``acquire(token:timeout:)``). A transaction
    /// opened with raw SQL outside ``Database/transaction(_:)`` keeps the writer on this
    /// thread ("pinned") until a later statement of the thread ends it.
    func release() {
        depth -= 1
        guard depth == 0 else { return }
        // Under the connection's lock: `close()` from another thread may be closing it.
        pinned = connection.lock.withLock { !connection.isAutocommit && connection.transactionDepth == 0 }
        if !pinned {
            activeobjects_atomic_store(owner, 0)
            lock.unlock()
        }
    }

    /// The writer's `data_version` (for the live-query monitor, on its own thread), or nil
    /// when another thread holds the writer or it is closed.
    func externalDataVersion() -> Int64? {
        let token = ThreadContext.current.token
        guard tryAcquire(token: token) else { return nil }
        defer { release() }
        return connection.lock.withLock { connection.dataVersion() }
    }
}
