/// Everything the library keeps per thread, in one box behind one thread-local key: the
/// accesses the thread holds open across calls, the facts of its last write to each database,
/// the database of the async call it runs, the readers it holds, the schema it used last, and
/// the schema builds in progress on it.
///
/// One per thread, never shared, so it needs no lock (`@exclusivity(unchecked)`: only its own
/// thread touches it, and no access to it overlaps another).
///
/// The routing of calls to connections (``Database/withAccess(_:_:)``) decides from
/// ``scopes``; it also keeps the thread's write facts here. Everything below the boundary works
/// from the ``Access`` value passed down. See ARCHITECTURE.md.
final class ThreadState {
    private static let boxes = ThreadLocal<ThreadState>()

    /// The calling thread's state, created on first use.
    @inline(__always)
    static var current: ThreadState { boxes.value { ThreadState() } }

    /// This thread's identity while it lives (the box's), for bookkeeping keyed by thread.
    var identity: ObjectIdentifier { ObjectIdentifier(self) }

    // MARK: Open accesses

    /// The accesses this thread holds open across calls, innermost last (see ``Scope``).
    @exclusivity(unchecked) private(set) var scopes: [Scope] = []

    /// The databases whose writer a raw `BEGIN` of this thread keeps (a ``Scope/Kind/pinnedWriter``
    /// scope lives between calls: its database must outlive it).
    @exclusivity(unchecked) private var pinnedDatabases: [Database] = []

    /// The innermost open access of `database` on this thread, if any.
    @inline(__always)
    func innermostScope(of database: Database) -> Scope? {
        if scopes.isEmpty { return nil }
        return innermostScope(of: ObjectIdentifier(database))
    }

    @inline(never)
    private func innermostScope(of database: ObjectIdentifier) -> Scope? {
        var index = scopes.count - 1
        while index >= 0 {
            if scopes[index].access.databaseID == database { return scopes[index] }
            index -= 1
        }
        return nil
    }

    /// Whether this thread holds the writer of any database (the schema registry never makes
    /// such a thread wait for another thread's build: that build may wait for this writer).
    var holdsAnyWriter: Bool { scopes.contains { $0.access.role == .writer } }

    /// Whether any scope of this thread belongs to `database` and satisfies `condition`.
    func hasScope(of database: Database, where condition: (Scope) -> Bool) -> Bool {
        let id = ObjectIdentifier(database)
        return scopes.contains { $0.access.databaseID == id && condition($0) }
    }

    func push(_ scope: Scope) {
        if scope.kind == .pinnedWriter { pinnedDatabases.append(scope.access.database) }
        scopes.append(scope)
    }

    /// How many calls of this thread are using a pinned writer scope right now (see
    /// `Database.useWriterScope`): the pin ends only when none is.
    @exclusivity(unchecked) var pinnedUses = 0

    /// Removes the scope at `index` (a pinned scope whose transaction ended, with scopes of other
    /// databases above it): the cursors bound to scopes above it keep their scopes.
    func removeScope(at index: Int) {
        guard index < scopes.count - 1 else { return pop() }
        let scope = scopes.remove(at: index)
        for entry in scopeCursors.indices where scopeCursors[entry].depth > index + 1 {
            scopeCursors[entry].depth -= 1
        }
        if scope.kind == .pinnedWriter,
           let pinned = pinnedDatabases.lastIndex(where: { ObjectIdentifier($0) == scope.access.databaseID }) {
            pinnedDatabases.remove(at: pinned)
        }
    }

    /// Ends the innermost scope; the cursors that read its snapshot close with it.
    func pop() {
        if !scopeCursors.isEmpty { closeScopeCursors(from: scopes.count) }
        let scope = scopes.removeLast()
        if scope.kind == .pinnedWriter,
           let index = pinnedDatabases.lastIndex(where: { ObjectIdentifier($0) == scope.access.databaseID }) {
            pinnedDatabases.remove(at: index)
        }
    }

    // MARK: Cursors bound to a scope

    /// Cursors reading the connection of an open scope, with that scope's depth (its index plus
    /// one): they read its snapshot, and are closed when it ends.
    @exclusivity(unchecked) private var scopeCursors: [(depth: Int, cursor: WeakScopeCursor)] = []

    /// The depth of the innermost scope of `database` (for a cursor that borrows its connection).
    func depthOfInnermostScope(of database: Database) -> Int? {
        let id = ObjectIdentifier(database)
        return scopes.lastIndex { $0.access.databaseID == id }.map { $0 + 1 }
    }

    /// Ties `cursor` to the scope at `depth`: when that scope ends, the cursor closes (its
    /// statement must not outlive the snapshot, nor the lease, it reads).
    func bind(_ cursor: any ScopeBoundCursor, toScopeAt depth: Int) {
        scopeCursors.append((depth, WeakScopeCursor(cursor)))
    }

    private func closeScopeCursors(from depth: Int) {
        let ending = scopeCursors.filter { $0.depth >= depth }
        scopeCursors.removeAll { $0.depth >= depth || $0.cursor.value == nil }
        for entry in ending { entry.cursor.value?.scopeEnded() }
    }

    // MARK: Facts of the last write, per database

    /// Per database (by ``Database/serial``, never reused), the rows changed by this thread's
    /// last INSERT, UPDATE or DELETE and the rowid of the last row it inserted. The databases a
    /// thread wrote to recently, most recent last: a thread of a pool that serves many
    /// databases keeps at most ``rememberedDatabases`` of them.
    @exclusivity(unchecked) private var writeFacts: [(database: Int, changes: Int, lastInsertedRowID: Int64)] = []
    static let rememberedDatabases = 64

    func changes(in database: Int) -> Int {
        writeFacts.last { $0.database == database }?.changes ?? 0
    }

    func lastInsertedRowID(in database: Int) -> Int64 {
        writeFacts.last { $0.database == database }?.lastInsertedRowID ?? 0
    }

    func recordWrite(in database: Int, changes: Int, lastInsertedRowID: Int64) {
        if let index = writeFacts.lastIndex(where: { $0.database == database }) {
            writeFacts[index].changes = changes
            writeFacts[index].lastInsertedRowID = lastInsertedRowID
            if index != writeFacts.count - 1 { writeFacts.append(writeFacts.remove(at: index)) }
        } else {
            if writeFacts.count >= Self.rememberedDatabases { writeFacts.removeFirst() }
            writeFacts.append((database, changes, lastInsertedRowID))
        }
    }

    // MARK: The async call this thread runs

    /// While this thread runs the SQLite work of an async call: the database the call runs on
    /// (models whose `database` is nil there use it, see `ActiveObject.resolvedDatabase`).
    @exclusivity(unchecked) var jobDatabase: Database?

    /// True while this thread runs the SQLite work of an async call.
    var isRunningAsyncJob: Bool { jobDatabase != nil }

    // MARK: Readers

    /// Per reader pool (by its database's serial), the slot this thread leased last: tried first
    /// next time (see ``ReaderPool``). At most ``rememberedDatabases`` pools, most recent last.
    @exclusivity(unchecked) var readerAffinity: [(pool: Int, slot: Int)] = []

    /// This thread's identity as a number, for lock-free bookkeeping (never 0).
    var token: Int { Int(bitPattern: Unmanaged.passUnretained(self).toOpaque()) }

    // MARK: Schemas

    /// The schema this thread used last (repeated saves and queries of one class skip the
    /// registry's lock).
    @exclusivity(unchecked) var recentSchemaKey: ObjectIdentifier?
    @exclusivity(unchecked) var recentSchema: ModelSchema?

    /// The innermost frame of a schema build in progress on this thread (unretained: each frame
    /// lives on the stack of the call that pushed it, and is popped before that call returns).
    @exclusivity(unchecked) var prototypeFrame: UnsafeRawPointer?
}

/// An access a thread holds open across calls, and what kind of call opened it.
struct Scope {
    enum Kind {
        /// The writer, taken by a call that runs on it: a ``Database/transaction(_:)-8sgwh``
        /// body, a write, or any call when one connection serves everything. Every call of
        /// the thread uses it.
        case writer
        /// The writer, kept between calls by a transaction begun with raw SQL (`BEGIN`),
        /// until a later statement of the thread ends it.
        case pinnedWriter
        /// A ``Database/read(_:)-54zpm`` block: reads use its snapshot; writes are refused.
        case readBlock
        /// A fetch that reads one snapshot (a query with `including`): reads use it; writes
        /// take the writer.
        case snapshot
    }

    let access: Access
    let kind: Kind
    /// True for a ``Kind/readBlock`` or ``Kind/snapshot`` scope that began its own read
    /// transaction (rather than reading inside one already open).
    var opensReadTransaction = false
}

/// A cursor that reads on a scope's connection and must end with that scope.
protocol ScopeBoundCursor: AnyObject {
    /// The scope it reads in ended: close, and refuse to go on.
    func scopeEnded()
}

/// A weak reference to a ``ScopeBoundCursor`` (a cursor dropped early is simply gone).
struct WeakScopeCursor {
    weak var value: (any ScopeBoundCursor)?
    init(_ value: any ScopeBoundCursor) { self.value = value }
}
