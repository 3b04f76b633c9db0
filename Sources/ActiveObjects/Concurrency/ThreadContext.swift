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
        /// True when the block began its own (deferred, read) transaction on the connection,
        /// rather than reading inside one already open.
        var opensTransaction = false
    }

    /// While this thread runs the SQLite work of an async call (a ``WorkerLane`` job): the
    /// database the call runs on.
    @exclusivity(unchecked) var jobDatabase: Database?
    /// True while this thread runs the SQLite work of an async call.
    var isRunningAsyncJob: Bool { jobDatabase != nil }
    /// Open read scopes, innermost last.
    @exclusivity(unchecked) private(set) var readScopes: [ReadScope] = []
    /// Cursors opened on the connection of a read scope, with that scope's depth (its index
    /// in `readScopes` plus one): they read its snapshot, and are closed when it ends.
    @exclusivity(unchecked) private var scopeCursors: [(depth: Int, cursor: WeakScopeCursor)] = []
    /// How many ``Database/withWriterConnection(_:timeout:_:)`` calls this thread is inside:
    /// above 0, the thread holds some database's writer (the schema registry then never waits
    /// for another thread's build, whose model `init()` may need that writer).
    @exclusivity(unchecked) var heldWriters = 0
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

    func popReadScope() {
        if !scopeCursors.isEmpty { closeScopeCursors(from: readScopes.count) }
        readScopes.removeLast()
    }

    /// The innermost read scope of `database` on this thread, with its depth, for a cursor
    /// that will read on its connection until it ends (see ``registerScopeCursor(_:depth:)``).
    func cursorScope(for database: ObjectIdentifier) -> (scope: ReadScope, depth: Int)? {
        guard let index = readScopes.lastIndex(where: { $0.database == database }) else { return nil }
        return (readScopes[index], index + 1)
    }

    /// Ties `cursor` to the read scope at `depth`: when that scope ends, the cursor closes
    /// (its statement must not outlive the snapshot, nor the lease, it reads).
    func registerScopeCursor(_ cursor: any ScopeBoundCursor, depth: Int) {
        scopeCursors.append((depth, WeakScopeCursor(cursor)))
    }

    private func closeScopeCursors(from depth: Int) {
        let ending = scopeCursors.filter { $0.depth >= depth }
        scopeCursors.removeAll { $0.depth >= depth || $0.cursor.value == nil }
        for entry in ending { entry.cursor.value?.scopeEnded() }
    }

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

/// A cursor that reads on a read scope's connection and must end with that scope.
protocol ScopeBoundCursor: AnyObject {
    /// The scope it reads in ended: close, and refuse to go on.
    func scopeEnded()
}

/// A weak reference to a ``ScopeBoundCursor`` (a cursor dropped early is simply gone).
struct WeakScopeCursor {
    weak var value: (any ScopeBoundCursor)?
    init(_ value: any ScopeBoundCursor) { self.value = value }
}
