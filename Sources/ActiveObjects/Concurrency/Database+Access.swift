// Which connection a call runs on: decided here, once per call, at the public boundary.
// ARCHITECTURE.md states these rules with their reasons; keep the two in step.

extension Database {
    /// Runs `body` with the connection a call that needs `need` uses.
    ///
    /// 1. **Inside an open scope of this database on this thread** — a `transaction` body, a
    ///    write in progress, a transaction begun with raw `BEGIN`, a `read` block, a snapshot
    ///    fetch — the call joins the innermost one: reads use its connection (its transaction or
    ///    snapshot); a write joins a scope on the writer, is refused in a `read` block, and takes
    ///    the writer when the scope is a reader's snapshot.
    /// 2. **Otherwise**: `.read` leases a reader for the call; `.snapshot` and `.readBlock`
    ///    lease a reader and open a read transaction around `body`; `.write` and `.writerRead`
    ///    take the writer. When one connection serves everything (in memory,
    ///    `maximumReaderCount = 0`, a rollback journal), the writer serves every need.
    ///
    /// An access on the writer is a scope while `body` runs, so that everything `body` calls on
    /// this thread (hooks, nested saves, a transaction's body) joins it instead of waiting for
    /// the writer its own thread holds. A leased reader is not (its statements are the
    /// library's own; a hook reading meanwhile leases another).
    ///
    /// - Throws: ``ActiveObjectError/misuse(_:)`` for a write inside `read`;
    ///   ``ActiveObjectError/databaseClosed``; ``DatabaseError`` `busy` when no reader became
    ///   free, or the writer stayed held, longer than the busy timeout.
    @inline(__always)
    func withAccess<T>(_ need: AccessNeed, _ body: (Access) throws -> T) throws -> T {
        let thread = ThreadState.current
        if let scope = thread.innermostScope(of: self) {
            return try join(scope, need, thread, body)
        }
        switch need {
        case .read:
            guard let readers else { return try onWriter(thread, body) }
            return try onLeasedReader(readers, thread, body)
        case .snapshot:
            return try inReadTransaction(.snapshot, thread, body)
        case .readBlock:
            return try inReadTransaction(.readBlock, thread, body)
        case .write, .writerRead:
            return try onWriter(thread, body)
        }
    }

    /// Rule 1: a call made inside an open scope of this thread.
    private func join<T>(_ scope: Scope, _ need: AccessNeed, _ thread: ThreadState,
                         _ body: (Access) throws -> T) throws -> T {
        switch need {
        case .read, .snapshot:
            // On the writer, a read may still write (raw SQL) or end a raw `BEGIN`'s
            // transaction: keep its facts, and give the writer back when that ended.
            guard scope.access.role == .writer else { return try use(scope.access, body) }
            return try useWriterScope(scope, thread, body)
        case .readBlock:
            if scope.kind == .readBlock { return try use(scope.access, body) }
            // Inside a transaction (or a snapshot fetch): the block reads what the enclosing
            // scope reads, and refuses writes.
            thread.push(Scope(access: scope.access, kind: .readBlock))
            defer { thread.pop() }
            return try use(scope.access, body)
        case .write:
            if scope.kind == .readBlock {
                throw ActiveObjectError.misuse("a write inside db.read { }: reads only there; use db.transaction { } to write")
            }
            guard scope.access.role == .writer else { return try onWriter(thread, body) }
            return try useWriterScope(scope, thread, body)
        case .writerRead:
            guard scope.access.role == .writer else { return try onWriter(thread, body) }
            return try useWriterScope(scope, thread, body)
        }
    }

    /// Runs `body` on an access this thread already holds (a scope's).
    @inline(__always)
    private func use<T>(_ access: Access, _ body: (Access) throws -> T) throws -> T {
        try access.withConnection { connection in
            connection.lock.lock()
            defer { connection.lock.unlock() }
            // A scope in progress when close() ran (a read block, a walk): its next call fails.
            guard connection.sqliteConnection != nil, !isClosed else { throw ActiveObjectError.databaseClosed }
            return try body(access)
        }
    }

    /// Runs `body` on the writer scope this thread holds, keeping the facts of its writes; a
    /// statement that ends a transaction begun with raw SQL gives the writer back — once the
    /// outermost call using that pinned scope returns (an inner `COMMIT` inside a walk that
    /// joined it must not give the writer away under the walk).
    private func useWriterScope<T>(_ scope: Scope, _ thread: ThreadState, _ body: (Access) throws -> T) throws -> T {
        try scope.access.withConnection { connection in
            let writes = connection.writeCount
            let pinned = scope.kind == .pinnedWriter
            if pinned { thread.pinnedUses += 1 }
            defer {
                if connection.writeCount != writes { recordWrite(on: connection, thread) }
                if pinned {
                    thread.pinnedUses -= 1
                    if thread.pinnedUses == 0 { endPinIfCommitted(thread) }
                }
            }
            return try use(scope.access, body)
        }
    }

    /// Rule 2, reads: a reader leased for the call.
    @inline(__always)
    private func onLeasedReader<T>(_ readers: ReaderPool, _ thread: ThreadState,
                                   _ body: (Access) throws -> T) throws -> T {
        let connection = try readers.lease(for: thread, timeout: options.busyTimeoutNanoseconds)
        defer { readers.giveBack(connection) }
        connection.lock.lock()
        defer { connection.lock.unlock() }
        guard connection.sqliteConnection != nil else { throw ActiveObjectError.databaseClosed }
        do {
            return try body(Access(database: self, connection: connection, role: .reader))
        } catch let error as DatabaseError where error.resultCode == .interrupt && readers.isShutDown {
            // close() interrupted this read (a walk whose body was running).
            throw ActiveObjectError.databaseClosed
        }
    }

    /// Rule 2, snapshots: one read transaction around `body`, on a leased reader (on the
    /// writer when one connection serves everything), as a scope of `kind`.
    private func inReadTransaction<T>(_ kind: Scope.Kind, _ thread: ThreadState,
                                      _ body: (Access) throws -> T) throws -> T {
        func run(_ access: Access) throws -> T {
            let connection = access.connection
            // One snapshot for every read: a deferred transaction, unless one is open already.
            let opens = connection.isAutocommit
            if opens { try connection.execute("BEGIN DEFERRED") }
            thread.push(Scope(access: access, kind: kind, opensReadTransaction: opens))
            let result: T
            do {
                result = try body(access)
            } catch {
                thread.pop()
                // The transaction only read — unless, with one connection for everything, a hook
                // wrote inside it: keep such writes, as they would be kept with readers.
                if opens && connection.sqliteConnection != nil && !connection.isAutocommit,
                   (try? connection.execute("COMMIT")) == nil {
                    try? connection.execute("ROLLBACK")
                }
                throw error
            }
            // The scope's cursors close first: they read the snapshot that ends here.
            thread.pop()
            if opens && !connection.isAutocommit {
                do {
                    try connection.execute("COMMIT")
                } catch {
                    // Never give a connection back with its transaction open.
                    if !connection.isAutocommit { try? connection.execute("ROLLBACK") }
                    throw error
                }
            }
            return result
        }
        guard let readers else { return try onWriter(thread, run) }
        return try onLeasedReader(readers, thread, run)
    }

    /// Rule 2, writes: the writer, taken for the call (waiting at most the busy timeout for
    /// another thread's transaction). While `body` runs it is a scope of this thread; a raw
    /// `BEGIN` that leaves a transaction open keeps it for the thread afterwards (a pinned
    /// scope), until a later statement of the thread ends that transaction.
    private func onWriter<T>(_ thread: ThreadState, _ body: (Access) throws -> T) throws -> T {
        guard !isClosed else { throw ActiveObjectError.databaseClosed }
        try writerGate.acquire(timeout: options.busyTimeoutNanoseconds)
        return try onAcquiredWriter(thread, body)
    }

    /// ``onWriter(_:_:)`` once the gate is taken: gives it back when `body` returns — unless
    /// `body` was a raw `BEGIN` (or `SAVEPOINT`) that left a transaction open, which keeps the
    /// writer on this thread (a pinned scope) until a later statement of the thread ends it.
    ///
    /// A transaction left open is kept only where that can work: not by the work of an async
    /// call (its thread is one of the library's, not the caller's), and not from inside
    /// another scope of this database (a hook during a fetch with `including`, a `read`
    /// block): there it is rolled back and the
    /// call throws ``ActiveObjectError/misuse(_:)``. A transaction left open by a call that
    /// failed (a `ROLLBACK` that failed in turn) is rolled back too. (Synchronous code inside
    /// an `async` function that begins a transaction with raw SQL must end it before its next
    /// `await`: the function may resume on another thread. Prefer `transaction`.)
    private func onAcquiredWriter<T>(_ thread: ThreadState, _ body: (Access) throws -> T) throws -> T {
        let connection = writer
        connection.lock.lock()
        guard connection.sqliteConnection != nil else {
            connection.lock.unlock()
            writerGate.release()
            throw ActiveObjectError.databaseClosed
        }
        let access = Access(database: self, connection: connection, role: .writer)
        // `last_insert_rowid()` answers for this thread, as with a connection of its own.
        connection.lastInsertRowID = thread.lastInsertedRowID(in: serial)
        let writes = connection.writeCount
        thread.push(Scope(access: access, kind: .writer))
        var result: T?
        var failure: (any Error)?
        do {
            result = try body(access)
        } catch {
            failure = error
        }
        thread.pop()
        if connection.writeCount != writes { recordWrite(on: connection, thread) }
        var pins = false
        if connection.sqliteConnection != nil && !connection.isAutocommit && connection.transactionDepth == 0 {
            // A failed call's leftover transaction is never kept; a raw BEGIN's may be.
            let refusal: String? = failure != nil ? "" : pinRefusal(thread)
            if let refusal {
                // Not kept: roll it back (what it wrote is undone), and say why.
                do {
                    try connection.execute("ROLLBACK")
                    if failure == nil { failure = ActiveObjectError.misuse(refusal) }
                } catch {
                    // It cannot even be rolled back: keep it on this thread rather than hand an
                    // open transaction to the next thread that takes the writer.
                    pins = true
                    if failure == nil { failure = error }
                }
            } else {
                pins = true
            }
        }
        connection.lock.unlock()
        if pins {
            thread.push(Scope(access: access, kind: .pinnedWriter))
        } else {
            writerGate.release()
        }
        if let failure { throw failure }
        return result!
    }

    /// Why this thread cannot keep a transaction begun with raw SQL open between calls, or nil
    /// when it can.
    private func pinRefusal(_ thread: ThreadState) -> String? {
        if thread.isRunningAsyncJob {
            return "a transaction begun with raw SQL from an async call cannot stay open (the call runs on the database's own threads): use `try await db.transaction { … }`"
        }
        if thread.innermostScope(of: self) != nil {
            return "a transaction begun with raw SQL inside another call on this database (a hook during a fetch with including, a db.read block) cannot stay open: begin it outside, or use db.transaction { … }"
        }
        return nil
    }

    /// Keeps what the thread's last write did, for ``changes`` and ``lastInsertedRowID``.
    private func recordWrite(on connection: Connection, _ thread: ThreadState) {
        thread.recordWrite(in: serial, changes: connection.lastChanges, lastInsertedRowID: connection.lastInsertRowID)
    }

    /// Gives the writer back when the transaction a raw `BEGIN` left open has ended: its pinned
    /// scope goes, wherever it is in the thread's stack (scopes of other databases may sit
    /// above it: a `COMMIT` made inside another database's transaction).
    private func endPinIfCommitted(_ thread: ThreadState) {
        guard let index = thread.scopes.lastIndex(where: { $0.kind == .pinnedWriter && $0.access.belongs(to: self) }),
              writer.lock.withLock({ writer.isAutocommit }) else { return }
        thread.removeScope(at: index)
        writerGate.release()
    }

    // MARK: Raw statements

    /// Runs one raw statement where its state is: on a reader only when it is read-only and
    /// reads no connection state (``StatementInfo/mayRunOnReader``); otherwise on the writer,
    /// exactly as it would run with one connection. Inside a scope, on the scope's connection
    /// when that can run it.
    ///
    /// - Throws: ``ActiveObjectError/misuse(_:)`` for a write inside `read`, and for transaction
    ///   statements that would break `transaction` (see ``checkRawStatement(_:on:)``); the
    ///   errors of ``withAccess(_:_:)`` and of compiling the statement.
    func withRawStatement<T>(_ sql: String, _ body: (Access, Statement) throws -> T) throws -> T {
        // Inside a read block or a snapshot fetch, a statement naming what only the writer has
        // fails as it is: run elsewhere it would read outside the block's snapshot.
        let enclosing = ThreadState.current.innermostScope(of: self)
        var result: T?
        var ran = false
        var needsWriter = AccessNeed.write
        let attempt = { (access: Access) throws in
            let statement: Statement
            do {
                statement = try access.connection.cachedStatement(sql)
            } catch let error as DatabaseError where access.role == .reader && enclosing == nil && self.needsWriterState(error) {
                // It names a TEMP object or an attached database, which only the writer has
                // (the reader could not compile it: nothing ran).
                needsWriter = .writerRead
                return
            }
            let info = statement.info
            if enclosing?.kind == .readBlock && info.writesOrControlsTransactions(statement) {
                throw ActiveObjectError.misuse(
                    "`\(sql)` inside db.read { }: reads only there (it writes or ends the block's transaction); use db.transaction { } to write")
            }
            if access.role == .reader && !info.mayRunOnReader(statement) {
                needsWriter = info.writesOrControlsTransactions(statement) ? .write : .writerRead
                return
            }
            result = try self.runRaw(statement, access, body)
            ran = true
        }
        // Compiled first where a read would run; outside any scope, on a connection free right
        // now (a writer-bound statement need not wait for a reader just to be compiled).
        if enclosing == nil { try withAnyFreeConnection(attempt) } else { try withAccess(.read, attempt) }
        if ran, let result { return result }
        return try withAccess(needsWriter) { access in
            try runRaw(try access.connection.cachedStatement(sql), access, body)
        }
    }

    private func runRaw<T>(_ statement: Statement, _ access: Access, _ body: (Access, Statement) throws -> T) throws -> T {
        if access.role == .writer { try checkRawStatement(statement, on: access.connection) }
        defer { if statement.info.createsConnectionState { writerHoldsConnectionState.set() } }
        return try body(access, statement)
    }

    /// Whether `error` is a reader's failure to compile a statement that names something only
    /// the writer has (a `TEMP` table, an attached database), once raw SQL created such state.
    private func needsWriterState(_ error: DatabaseError) -> Bool {
        guard writerHoldsConnectionState.isSet, error.resultCode == .error else { return false }
        return error.message.hasPrefix("no such table") || error.message.hasPrefix("no such view")
            || error.message.hasPrefix("unknown database")
    }

    /// Refuses raw transaction statements that would break ``transaction(_:)-8sgwh``: `BEGIN`,
    /// `COMMIT` and `ROLLBACK` inside it, savepoints under the library's reserved names,
    /// `RELEASE`/`ROLLBACK TO` of a savepoint opened outside the body, and a raw `BEGIN` from
    /// an async call (its thread is not the caller's).
    func checkRawStatement(_ statement: Statement, on connection: Connection) throws {
        guard let control = statement.info.transactionControl else { return }
        if connection.transactionDepth > 0 {
            switch control {
            case .begin, .commit, .rollback:
                throw ActiveObjectError.misuse(
                    "`\(statement.sql)` inside db.transaction { }: the transaction commits when its body returns and rolls back when it throws")
            case .savepoint(let name), .release(let name), .rollbackTo(let name):
                if name.lowercased().hasPrefix(Self.savepointPrefix) {
                    throw ActiveObjectError.misuse("savepoint names starting with \(Self.savepointPrefix) are reserved for db.transaction")
                }
                if !connection.mayRunInTransactionBody(control) {
                    throw ActiveObjectError.misuse(
                        "`\(statement.sql)` inside db.transaction { } names a savepoint the transaction's body did not open: it would end or undo the transaction behind its back")
                }
            }
        }
        if control == .begin && ThreadState.current.isRunningAsyncJob {
            throw ActiveObjectError.misuse(
                "a raw BEGIN from an async call cannot keep its transaction: use `try await db.transaction { … }`")
        }
    }

    // MARK: Lookups on the way to a write

    /// Runs a short read (a table-layout lookup, the compilation of a raw statement) on a
    /// connection free right now — an idle reader, or a new one while fewer than the maximum
    /// are open, else the writer if no other thread holds it — and only then waits for a
    /// reader: such work often runs on the way to a write, which must not wait for a reader that
    /// a long walk holds. Inside a scope, on the scope's connection.
    func withAnyFreeConnection<T>(_ body: (Access) throws -> T) throws -> T {
        let thread = ThreadState.current
        if thread.innermostScope(of: self) == nil, let readers {
            if let connection = try readers.leaseWithoutWaiting(for: thread) {
                defer { readers.giveBack(connection) }
                connection.lock.lock()
                defer { connection.lock.unlock() }
                guard connection.sqliteConnection != nil else { throw ActiveObjectError.databaseClosed }
                return try body(Access(database: self, connection: connection, role: .reader))
            }
            if !isClosed && writerGate.tryAcquire() { return try onAcquiredWriter(thread, body) }
        }
        return try withAccess(.read, body)
    }
}

// MARK: Cursors

/// Where a cursor reads: decided when it is opened (a cursor outlives the call that opens it),
/// by ``Database/placeCursor(_:)``.
enum CursorPlacement {
    /// The connection of the opening thread's reader scope (a `read` block, a snapshot fetch):
    /// the cursor reads that snapshot, on that thread only, and closes when the scope ends.
    case borrowed(Access, thread: ObjectIdentifier)
    /// A reader leased for the cursor's lifetime: its statement keeps a read transaction (one
    /// snapshot) open until the cursor ends. The connection is held strongly here: the access
    /// does not keep it alive, and a temporary extra reader has no other owner.
    case leased(Access, Connection)
    /// The writer, taken for each step: a cursor opened inside a transaction (it reads the
    /// transaction's writes), or when one connection serves everything.
    case writer
}

extension Database {
    /// Decides where `cursor` reads (see ``CursorPlacement``), leasing or binding what it needs.
    /// - Throws: ``ActiveObjectError/databaseClosed``; ``DatabaseError`` `busy` when no reader
    ///   became free within the busy timeout.
    func placeCursor(_ cursor: any ScopeBoundCursor) throws -> CursorPlacement {
        guard !isClosed else { throw ActiveObjectError.databaseClosed }
        let thread = ThreadState.current
        if let scope = thread.innermostScope(of: self), let depth = thread.depthOfInnermostScope(of: self) {
            guard scope.access.role == .reader else { return .writer }
            thread.bind(cursor, toScopeAt: depth)
            return .borrowed(scope.access, thread: thread.identity)
        }
        guard let readers else { return .writer }
        let connection = try readers.lease(for: thread, timeout: options.busyTimeoutNanoseconds)
        return .leased(Access(database: self, connection: connection, role: .reader), connection)
    }

    /// Gives back what ``placeCursor(_:)`` leased (from any thread).
    func releaseCursorPlacement(_ placement: CursorPlacement) {
        if case .leased(_, let connection) = placement { readers?.giveBack(connection) }
    }
}
