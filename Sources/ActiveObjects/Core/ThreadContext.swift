/// What the current thread is doing with each ``Database``: the connections its open
/// ``Database/read(_:)`` blocks and fetches use, and the rows its last write changed.
///
/// One per thread (a thread-local box), never shared, so it needs no lock. Its address is
/// the thread's identity for ``WriterGate`` and ``ReaderPool`` (`token`).
final class ThreadContext {
    /// A connection this thread reads through until the scope ends.
    struct ReadScope {
        let database: ObjectIdentifier
        let connection: Connection
        /// True for ``Database/read(_:)`` blocks: a write inside is refused.
        let forbidsWrites: Bool
    }

    /// While this thread runs the SQLite work of an async call (a ``WorkerLane`` job): the
    /// database the call runs on.
    @exclusivity(unchecked) var jobDatabase: Database?
    /// True while this thread runs the SQLite work of an async call.
    var isRunningAsyncJob: Bool { jobDatabase != nil }
    /// Open read scopes, innermost last.
    @exclusivity(unchecked) private(set) var readScopes: [ReadScope] = []
    /// Rows changed by this thread's last write, per database.
    @exclusivity(unchecked) private var lastChanges: [(database: ObjectIdentifier, count: Int)] = []

    /// This thread's identity: the box's address (never 0).
    var token: Int { Int(bitPattern: Unmanaged.passUnretained(self).toOpaque()) }

    /// The innermost read scope of `database` on this thread.
    @inline(__always)
    func readScope(for database: ObjectIdentifier) -> ReadScope? {
        if readScopes.isEmpty { return nil }
        return readScopes.last { $0.database == database }
    }

    func pushReadScope(_ scope: ReadScope) { readScopes.append(scope) }
    func popReadScope() { readScopes.removeLast() }

    func recordChanges(_ count: Int, in database: ObjectIdentifier) {
        if let index = lastChanges.firstIndex(where: { $0.database == database }) {
            lastChanges[index].count = count
        } else {
            lastChanges.append((database, count))
        }
    }

    func changes(in database: ObjectIdentifier) -> Int {
        lastChanges.first { $0.database == database }?.count ?? 0
    }

    func forget(_ database: ObjectIdentifier) {
        lastChanges.removeAll { $0.database == database }
    }

    private static let boxes = ThreadLocal<ThreadContext>()

    /// This thread's context, created on first use.
    static var current: ThreadContext { boxes.value { ThreadContext() } }
}
