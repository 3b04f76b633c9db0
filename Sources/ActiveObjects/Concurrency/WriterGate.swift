import Foundation

/// Gives one thread at a time the writer connection, for as long as it needs it: one write,
/// a whole ``Database/transaction(_:)``, or a transaction begun with raw `BEGIN` (which keeps
/// the writer until the thread commits or rolls back).
///
/// Not re-entrant: a thread that holds the writer has it as an open scope (``Scope``), and
/// every call it makes meanwhile joins that scope instead of coming back here (see
/// ``Database/withAccess(_:_:)``). Another thread waits at most the busy timeout, then gets
/// SQLite's `busy` error — the same rule as for another process holding the file's write lock.
/// The gate is released on the thread that took it (`NSLock`'s rule).
///
/// It also serves the change monitor's looks at `data_version`, which need the writer
/// connection (see ``look(_:)``).
final class WriterGate: @unchecked Sendable {
    // Safety of @unchecked Sendable: `lock` is Foundation's; `watch` is guarded by
    // `watchLock`; `connection` is only used by the thread holding `lock`.
    let connection: Connection
    private let lock = NSLock()
    /// Set when the change monitor wanted to look at `data_version` but another thread held
    /// the writer: the holder looks for it when it gives the writer back.
    private let lookWanted = AtomicFlag()
    private let watchLock = NSLock()
    /// The change monitor's watch of `data_version`, while one runs.
    private var watch: DataVersionWatch?

    init(connection: Connection) {
        self.connection = connection
    }

    /// Takes the writer.
    /// - Throws: ``DatabaseError`` `busy` after waiting `timeout` nanoseconds for another thread.
    func acquire(timeout: Int64) throws {
        if lock.try() { return }
        let deadline = Date(timeIntervalSinceNow: Double(max(0, timeout)) / 1e9)
        guard lock.lock(before: deadline) else {
            throw DatabaseError(
                extendedResultCode: .busy,
                message: "the database's writer stayed busy for longer than the busy timeout: a transaction held it on another thread (an async call runs on the database's own threads, so a raw BEGIN of the caller's thread counts too)")
        }
    }

    /// Takes the writer only if no other thread holds it.
    func tryAcquire() -> Bool { lock.try() }

    /// Gives the writer back (after ``acquire(timeout:)`` or a successful ``tryAcquire()``,
    /// on the same thread). Makes the change monitor's look first when it asked for one.
    func release() {
        // One atomic load: the monitor's look, when it could not take the writer itself.
        let changed = lookWanted.isSet ? lookForMonitor() : nil
        lock.unlock()
        changed?.onChange()
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

    /// The change monitor's look at `data_version` (on its own queue): true when another
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
        guard lock.try() else {
            lookWanted.set()
            return nil
        }
        // Looking now: the holder need not look for us.
        lookWanted.clear()
        let version = connection.lock.withLock { connection.dataVersion() }
        lock.unlock()
        return version.map { watch.record($0) }
    }

    /// The look the monitor asked for, run by the thread giving the writer back (it holds the
    /// writer): the watch to tell when `data_version` changed, else nil.
    private func lookForMonitor() -> DataVersionWatch? {
        lookWanted.clear()
        guard let watch = watchLock.withLock({ watch }) else { return nil }
        guard let version = connection.lock.withLock({ connection.dataVersion() }) else { return nil }
        return watch.record(version) ? watch : nil
    }
}
