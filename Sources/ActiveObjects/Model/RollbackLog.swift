/// Restores model objects when the transaction (or savepoint) that wrote them rolls back, so
/// that they match the database again: an object whose INSERT was undone is new again
/// (`id == nil`, changes pending), an updated object gets back its pending changes, a
/// deleted one holds its row again.
///
/// It lives on the writer connection (as its ``TransactionListener``) and is only written
/// inside ``Database/transaction(_:)``. Memory stays bounded however many objects a
/// transaction writes: entries hold their object weakly (an object that is gone has nothing
/// left to restore) and the entries of objects that are gone are dropped every few thousand
/// writes. Updating 1,000,000 rows streamed with `each` in one transaction therefore keeps
/// about as many entries as objects alive at once, not a million.
final class RollbackLog: TransactionListener {
    /// What an object looked like before its first write at one transaction level.
    struct Snapshot {
        let id: Int64?
        let state: RecordState
        let persistedRowID: Int64?
        let relations: [PreloadKey: Any]?
        /// The columns' change tracking (only for objects holding a row: a new object is
        /// inserted whole, so it has none to keep).
        let columnStates: [ColumnState]?
    }

    private struct Entry {
        weak var object: ActiveObject?
        let snapshot: Snapshot
    }

    @exclusivity(unchecked) private var entries: [Entry] = []
    /// For each open transaction level, how many entries preceded it.
    @exclusivity(unchecked) private var marks: [Int] = []
    /// When `entries` reaches this count, entries of deallocated objects are dropped.
    @exclusivity(unchecked) private var compactionThreshold = RollbackLog.minimumCompactionThreshold
    static let minimumCompactionThreshold = 4096

    /// The log of `connection`, created on first use.
    static func of(_ connection: Connection) -> RollbackLog {
        if let log = connection.transactionListener as? RollbackLog { return log }
        let log = RollbackLog()
        log.marks = Array(repeating: 0, count: connection.transactionDepth)
        connection.transactionListener = log
        return log
    }

    /// Remembers `object` as it was before a write at the current level.
    func record(_ object: ActiveObject, _ snapshot: Snapshot) {
        if entries.count >= compactionThreshold { compact() }
        entries.append(Entry(object: object, snapshot: snapshot))
    }

    /// How many entries the log holds (tests).
    var count: Int { entries.count }

    func transactionLevelBegan(depth: Int) {
        marks.append(entries.count)
    }

    func transactionLevelCommitted(depth: Int) {
        marks.removeLast()
        // A released savepoint's entries stay: the enclosing transaction may still roll back.
        if marks.isEmpty {
            entries.removeAll()
            compactionThreshold = Self.minimumCompactionThreshold
        }
    }

    func transactionLevelRolledBack(depth: Int) {
        let mark = marks.popLast() ?? 0
        guard mark < entries.count else { return }
        let undone = entries[mark...]
        entries.removeSubrange(mark...)
        // Newest first: an object written twice ends as it was before the first write.
        for entry in undone.reversed() {
            entry.object?.restore(entry.snapshot)
        }
    }

    /// Drops the entries of deallocated objects, and moves the level marks accordingly.
    private func compact() {
        var kept: [Entry] = []
        kept.reserveCapacity(entries.count / 2)
        var newMarks = marks
        var markIndex = 0
        for (index, entry) in entries.enumerated() {
            while markIndex < marks.count && marks[markIndex] == index {
                newMarks[markIndex] = kept.count
                markIndex += 1
            }
            if entry.object != nil { kept.append(entry) }
        }
        while markIndex < marks.count {
            newMarks[markIndex] = kept.count
            markIndex += 1
        }
        entries = kept
        marks = newMarks
        compactionThreshold = max(Self.minimumCompactionThreshold, kept.count * 2)
    }
}

extension ActiveObject {
    /// The state a rollback must bring back.
    func rollbackSnapshot(schema: ModelSchema) -> RollbackLog.Snapshot {
        let states = recordState == .persisted
            ? withUnsafeObjectPointer { base in schema.accessors.map { $0.state(in: base) } }
            : nil
        return RollbackLog.Snapshot(id: id, state: recordState, persistedRowID: persistedRowID,
                                    relations: preloadedRelations, columnStates: states)
    }

    /// Puts back a snapshot after a rollback. Writes the properties' storage directly: no
    /// `didSet` observer runs (see ``didLoad()``).
    func restore(_ snapshot: RollbackLog.Snapshot) {
        id = snapshot.id
        recordState = snapshot.state
        persistedRowID = snapshot.persistedRowID
        preloadedRelations = snapshot.relations
        if let states = snapshot.columnStates, let schema = try? ModelSchema.of(Swift.type(of: self)) {
            withUnsafeObjectPointer { base in
                for (accessor, state) in zip(schema.accessors, states) { accessor.setState(state, in: base) }
            }
        }
    }
}
