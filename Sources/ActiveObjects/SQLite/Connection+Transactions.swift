import CSQLite

extension Connection {
    // MARK: Transaction levels and changes

    /// A ``Database/transaction(_:)`` level began (BEGIN or SAVEPOINT ran).
    func beginLevel() {
        transactionDepth += 1
        changeMarks.append(changes.count)
        transactionListener?.transactionLevelBegan(depth: transactionDepth)
    }

    /// The innermost level committed (COMMIT or RELEASE ran).
    func commitLevel() {
        let depth = transactionDepth
        forgetRawSavepoints(from: depth)
        transactionDepth -= 1
        changeMarks.removeLast()
        transactionListener?.transactionLevelCommitted(depth: depth)
    }

    /// The innermost level rolled back (ROLLBACK or ROLLBACK TO ran, or SQLite rolled back).
    func rollBackLevel() {
        let depth = transactionDepth
        forgetRawSavepoints(from: depth)
        transactionDepth -= 1
        if let mark = changeMarks.popLast(), mark < changes.count { changes.removeSubrange(mark...) }
        if uncommittedSchemaChange { schemaChanged?() }
        transactionListener?.transactionLevelRolledBack(depth: depth)
    }

    /// Whether raw SQL inside a transaction body may run `control`: it may open savepoints, and
    /// release or roll back to those its own level opened. Releasing (or rolling back to) a
    /// savepoint opened *outside* the body — before the transaction, or by an enclosing level —
    /// would end or undo the library's transaction behind its back (a `RELEASE` of an
    /// enclosing savepoint commits it).
    func mayRunInTransactionBody(_ control: TransactionControl) -> Bool {
        switch control {
        case .release(let name), .rollbackTo(let name):
            guard let index = rawSavepointIndex(named: name) else { return false }
            return rawSavepoints[index].depth == transactionDepth
        case .savepoint, .begin, .commit, .rollback:
            return true
        }
    }

    /// A transaction statement ran (successfully): keeps the raw savepoints up to date. A raw
    /// `ROLLBACK TO` forgets the changes recorded since its savepoint began, so that a commit
    /// reports only what it kept. The library's own savepoints are handled by the levels.
    func transactionStatementRan(_ control: TransactionControl) {
        switch control {
        case .savepoint(let name):
            let key = name.lowercased()
            guard !key.hasPrefix(Database.savepointPrefix) else { return }
            rawSavepoints.append((key, transactionDepth, changes.count))
        case .release(let name):
            guard let index = rawSavepointIndex(named: name) else { return }
            rawSavepoints.removeSubrange(index...)
        case .rollbackTo(let name):
            guard let index = rawSavepointIndex(named: name) else { return }
            // The savepoint stays open; those opened after it are gone.
            rawSavepoints.removeSubrange((index + 1)...)
            let mark = rawSavepoints[index].mark
            if mark < changes.count { changes.removeSubrange(mark...) }
            if uncommittedSchemaChange { schemaChanged?() }
        case .commit, .rollback:
            rawSavepoints.removeAll()
            uncommittedSchemaChange = false
        case .begin:
            break
        }
    }

    /// The innermost raw savepoint named `name` (SQLite compares names case-insensitively);
    /// nil for none, and for the library's own savepoints (the levels handle those).
    private func rawSavepointIndex(named name: String) -> Int? {
        let key = name.lowercased()
        guard !key.hasPrefix(Database.savepointPrefix) else { return nil }
        return rawSavepoints.lastIndex { $0.name == key }
    }

    /// A transaction level ended: the raw savepoints opened in it ended with it.
    private func forgetRawSavepoints(from depth: Int) {
        if let last = rawSavepoints.last, last.depth >= depth {
            rawSavepoints.removeAll { $0.depth >= depth }
        }
    }

    /// Tells the commit sink what the commit changed, and forgets it.
    func publishCommit() {
        uncommittedSchemaChange = false
        guard !changes.isEmpty else { return }
        if let commitSink, commitSink.isObserving { commitSink.committed(changes, rows: committedRows) }
        changes.removeAll(keepingCapacity: true)
        restartRowLog()
    }

    /// A rollback happened: the changes since the last commit are gone.
    func forgetChanges() {
        changes.removeAll(keepingCapacity: true)
        restartRowLog(switchingHook: false)
        changeMarks = changeMarks.map { _ in 0 }
        rawSavepoints.removeAll()
        if uncommittedSchemaChange {
            uncommittedSchemaChange = false
            schemaChanged?()
        }
    }
}


/// Told about the transaction levels of the writer connection, so that the layers above can
/// keep state per level (the Model layer's rollback log restores objects). Called on the
/// thread that runs the transaction, while it holds the writer.
protocol TransactionListener: AnyObject {
    func transactionLevelBegan(depth: Int)
    func transactionLevelCommitted(depth: Int)
    func transactionLevelRolledBack(depth: Int)
}

/// Receives the writer's commits (the live-query center).
protocol CommitSink: AnyObject {
    /// Whether anyone listens; when false, commits are not reported (no work per commit).
    var isObserving: Bool { get }
    /// Whether a listener wants the rows each commit changed (the update hook; see
    /// `Connection+RowChanges.swift`). Read before each write outside a transaction: one
    /// atomic load.
    var wantsRowChanges: Bool { get }
    /// The tables whose changed rows are wanted (names lowercased), and a number that changes
    /// whenever they do. Read between transactions while ``wantsRowChanges``, when
    /// ``rowTablesGeneration`` moved.
    var rowTables: (tables: Set<String>, generation: Int) { get }
    /// The number ``rowTables`` comes with, read without a lock.
    var rowTablesGeneration: Int { get }
    /// A commit happened; `statements` changed rows or the schema, `rows` are the rows they
    /// changed (nil when unknown). Must not keep the array.
    func committed(_ statements: [StatementInfo], rows: CommittedRows?)
}

/// Gathers the tables read by the statements a connection runs while it is set (the reads
