import CSQLite

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
        /// The change tracking (only for objects holding a row: a new object is inserted
        /// whole, so it has none to keep): a copy of the values before, and the bookkeeping bits.
        let edits: ObjectEdits?
        let bookkeeping: UInt8
        /// The slot of an auto-numbered key that was nil (SQLite numbers the row, and the
        /// object takes that number): a rollback makes it nil again, so a retry is numbered
        /// anew rather than reusing a number another row may take meanwhile.
        var nilAutoNumberedKeySlot: Int? = nil
        /// Role columns a write stamped (or an upsert returned): the values the object held
        /// before, put back by a rollback (the row holds them again), in `context`.
        var valuesBefore: [(slot: Int, value: DatabaseValue)] = []
        var context = ValueContext()
    }

    private struct Entry {
        weak var object: ActiveObject?
        let snapshot: Snapshot
    }

    @exclusivity(unchecked) private var entries: [Entry] = []
    /// The fate of each open transaction level, innermost last (objects inserted at a level
    /// hold its fate instead of a log entry).
    @exclusivity(unchecked) private var fates: [TransactionFate] = []
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
        // Levels opened before the log existed: nothing was inserted there through it.
        var parent: TransactionFate?
        for _ in 0..<connection.transactionDepth {
            let fate = TransactionFate(parent: parent)
            log.fates.append(fate)
            parent = fate
        }
        connection.transactionListener = log
        return log
    }

    /// The fate of the innermost open level.
    var currentFate: TransactionFate? { fates.last }

    /// Remembers `object` as it was before a write at the current level.
    func record(_ object: ActiveObject, _ snapshot: Snapshot) {
        if entries.count >= compactionThreshold { compact() }
        entries.append(Entry(object: object, snapshot: snapshot))
    }

    /// How many entries the log holds (tests).
    var count: Int { entries.count }

    func transactionLevelBegan(depth: Int) {
        marks.append(entries.count)
        fates.append(TransactionFate(parent: fates.last))
    }

    func transactionLevelCommitted(depth: Int) {
        marks.removeLast()
        // A released savepoint's inserts share the enclosing level's fate from now on.
        fates.removeLast().settle(marks.isEmpty ? .committed : .released)
        // A released savepoint's entries stay: the enclosing transaction may still roll back.
        if marks.isEmpty {
            entries.removeAll()
            compactionThreshold = Self.minimumCompactionThreshold
        }
    }

    func transactionLevelRolledBack(depth: Int) {
        let mark = marks.popLast() ?? 0
        let fate = fates.popLast()
        if mark < entries.count {
            let undone = entries[mark...]
            entries.removeSubrange(mark...)
            // Newest first: an object written twice ends as it was before the first write.
            for entry in undone.reversed() {
                entry.object?.restore(entry.snapshot)
            }
        }
        // Then the level's inserts (they settle to new objects when next looked at).
        fate?.settle(.rolledBack)
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

/// The fate of one transaction level, shared by the objects inserted at that level: open
/// until the level ends; then committed, rolled back, or released into the enclosing level
/// (whose fate it then takes). Read by the inserted objects whenever they are next used.
final class TransactionFate: @unchecked Sendable {
    // Safety of @unchecked Sendable: `state` is atomic; `parent` is immutable.
    enum Outcome: Int { case open = 0, committed = 1, rolledBack = 2, released = 3 }

    private let state = AtomicWord(Outcome.open.rawValue)
    let parent: TransactionFate?

    init(parent: TransactionFate?) {
        self.parent = parent
    }

    func settle(_ outcome: Outcome) {
        state.store(outcome.rawValue)
    }

    /// The final outcome for the objects inserted at this level (a released level takes its
    /// parent's); `.open` while it is not known yet. Never `.released`.
    var outcome: Outcome {
        var fate = self
        while true {
            let outcome = Outcome(rawValue: fate.state.value) ?? .open
            guard outcome == .released, let parent = fate.parent else { return outcome }
            fate = parent
        }
    }
}

extension ActiveObject {
    /// The state a rollback must bring back.
    func rollbackSnapshot(schema: ModelSchema) -> RollbackLog.Snapshot {
        let holdsRow = recordState != .new
        var snapshot = RollbackLog.Snapshot(id: rowID, state: recordState, persistedRowID: persistedRowID,
                                            relations: preloadedRelations,
                                            edits: holdsRow ? edits : nil,
                                            bookkeeping: assignmentBookkeeping)
        if let slot = schema.autoNumberedKeySlot, withUnsafeObjectPointer({ schema.accessors[slot].isNull(in: $0) }) {
            snapshot.nilAutoNumberedKeySlot = slot
        }
        return snapshot
    }

    /// Puts back a snapshot after a rollback. Writes the properties' storage directly: no
    /// `didSet` observer runs (see ``didLoad()``); Observation's observers of `id` and of an
    /// auto-numbered key are notified when they change.
    func restore(_ snapshot: RollbackLog.Snapshot) {
        let schema = try? ModelSchema.of(Swift.type(of: self))
        let numberedKey = snapshot.nilAutoNumberedKeySlot.flatMap { slot in schema?.accessors[slot] }
        let stamped = schema.map { schema in snapshot.valuesBefore.map { (schema.accessors[$0.slot], $0.value) } } ?? []
        notifyingObservers(ofOffsets: (numberedKey.map { [$0.valueOffset] } ?? []) + stamped.map(\.0.valueOffset),
                           id: rowID != snapshot.id, changes: recordState != snapshot.state) {
            withUnsafeObjectPointer { base in
                for (accessor, value) in stamped { _ = accessor.load(value, into: base, context: snapshot.context) }
            }
            storeRowID(snapshot.id)
            recordState = snapshot.state
            persistedRowID = snapshot.persistedRowID
            preloadedRelations = snapshot.relations
            if snapshot.state != .new {
                // The values before the write are pending again; so are the assignments made
                // since (their values before are the row's again, but for the written ones).
                var pending = edits ?? ObjectEdits()
                if let older = snapshot.edits { pending.adoptOriginals(of: older) }
                edits = pending.isEmpty ? nil : pending
                // Keep the observed bit: observers registered since stay registered.
                assignmentBookkeeping = snapshot.bookkeeping | (assignmentBookkeeping & AssignmentBookkeeping.observed)
            }
            if let numberedKey {
                withUnsafeObjectPointer { numberedKey.setInteger(nil, in: $0) }
            }
        }
    }
}
