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
    // only ever see its own token there if it stored it itself); `watch` is guarded by
    // `watchLock`.
    let connection: Connection
    private let lock = NSLock()
    private let owner: UnsafeMutablePointer<CLong>
    private var depth = 0
    /// True while a transaction begun with raw SQL keeps the writer on its thread.
    private var pinned = false
    /// Set when the change monitor wanted to look at `data_version` but another thread held
    /// the writer: the holder looks for it when it gives the writer back.
    private let lookWanted = AtomicFlag()
    private let watchLock = NSLock()
    /// The change monitor's watch of `data_version`, while one runs.
    private var watch: DataVersionWatch?

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
            // One atomic load: the monitor's look, when it could not take the writer itself.
            let changed = lookWanted.isSet ? lookForMonitor() : nil
            activeobjects_atomic_store(owner, 0)
            lock.unlock()
            changed?.onChange()
        }
    }

    /// Starts a watch of other connections' commits for the change monitor: `onChange` is
    /// called when the writer's `data_version` changed between two looks (see ``look(_:)``).
    func startWatching(onChange: @escaping @Sendable () -> Void) -> DataVersionWatch {
        let watch = DataVersionWatch(onChange: onChange)
        watchLock.withLock { self.watch = watch }
        return watch
    }

    /// Ends a watch (the monitor stopped): the writer no longer looks for it.
    func stopWatching(_ watch: DataVersionWatch) {
        watchLock.withLock { if self.watch === watch { self.watch = nil } }
    }

    /// The change monitor's look at `data_version` (on its own thread): true when another
    /// connection or process committed since the last look, false when not.
    ///
    /// Nil when the look cannot be made now — another thread holds the writer, or a
    /// transaction is open on it (``Connection/dataVersion()``) — and the monitor looks again
    /// shortly. When another thread holds the writer, the holder also looks when it gives the
    /// writer back, and calls the watch's `onChange` itself if the version changed — so that
    /// a thread committing back to back, which takes the writer again at once, never keeps
    /// the monitor from looking (the monitor's own attempts could lose to it every time).
    /// That costs the writer one atomic load per release while no look is wanted.
    func look(_ watch: DataVersionWatch) -> Bool? {
        let token = ThreadContext.current.token
        guard tryAcquire(token: token) else {
            lookWanted.set()
            return nil
        }
        // Looking now: the holder need not look for us.
        lookWanted.clear()
        defer { release() }
        let version = connection.lock.withLock { connection.dataVersion() }
        return version.map { watch.record($0) }
    }

    /// The look the monitor asked for, run by the thread giving the writer back (it holds the
    /// writer, no transaction open): the watch to tell when `data_version` changed, else nil.
    private func lookForMonitor() -> DataVersionWatch? {
        lookWanted.clear()
        guard let watch = watchLock.withLock({ watch }) else { return nil }
        guard let version = connection.lock.withLock({ connection.dataVersion() }) else { return nil }
        return watch.record(version) ? watch : nil
    }
}

/// The change monitor's view of the writer's `PRAGMA data_version`, which changes only when
/// another connection or process commits: the value seen at the last look, compared with the
/// next. Looks are made by the monitor's thread and by threads giving the writer back, always
/// while holding the writer, so they are recorded in the order they were made.
final class DataVersionWatch: @unchecked Sendable {
    // Safety of @unchecked Sendable: `last` is guarded by `lock`; `onChange` is immutable.
    private let lock = NSLock()
    private var last: Int64?
    /// Called when another connection committed (a look found a new version).
    let onChange: @Sendable () -> Void

    init(onChange: @escaping @Sendable () -> Void) { self.onChange = onChange }

    /// Records the version a look found: true when it differs from the previous look's.
    ///
    /// The first look is a change too: it may come after another connection's commit that
    /// the observations' first fetches did not see (the monitor's thread starts late on a
    /// busy machine, or the writer is held and its holder looks only when it gives it back),
    /// and a baseline taken after that commit would hide it for good. Reporting it costs one
    /// fetch per observation when the monitor starts, which emits only if the result changed.
    func record(_ version: Int64) -> Bool {
        lock.withLock {
            defer { last = version }
            return last.map { $0 != version } ?? true
        }
    }
}
