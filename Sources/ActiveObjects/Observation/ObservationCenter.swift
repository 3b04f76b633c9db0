import CSQLite
import Foundation

/// The live queries of one ``Database``: told about every commit of the writer (with the
/// tables it changed) and about commits by other connections and processes (by the
/// ``ChangeMonitor``), it asks the observations that may be affected to fetch again.
///
/// It keeps the tables each observation's last fetch read, and a count per table over all
/// observations, so that a commit to tables nobody observes costs one lock and a lookup per
/// written table — not a call into every observation; the answer for the last statement is
/// kept until the observed tables change (cached statements come back with the same info).
///
/// Nothing holds the center weakly: a weak reference would give it a side table, and every
/// retain of it (one per commit) would take the runtime's slow path.
final class ObservationCenter: CommitSink, @unchecked Sendable {
    // Safety of @unchecked Sendable: `entries`, `tableCounts`, `unknownTables`, `monitor`,
    // `link`, `closed` and the cached answer are guarded by `lock`; `observing` is an atomic flag.
    private let lock = NSLock()
    private struct Registration {
        let entry: any ObservationEntry
        /// What the last fetch read; nil before the first fetch (every commit concerns it).
        var tables: Set<String>?
    }
    private var entries: [ObjectIdentifier: Registration] = [:]
    /// How many registrations read each table.
    private var tableCounts: [String: Int] = [:]
    /// How many registrations have not fetched yet.
    private var unknownTables = 0
    private var monitor: ChangeMonitor?
    /// How the monitor reaches the center; cut when the monitor stops.
    private var link: MonitorLink?
    private var closed = false
    /// The last single-statement commit checked, and whether it wrote an observed table;
    /// valid while `tableCounts` and `unknownTables` stay as they were (`generation`).
    private var lastInfo: StatementInfo?
    private var lastInfoTouches = false
    private var lastInfoGeneration = 0
    private var generation = 1
    private let observing = AtomicFlag()
    /// How many registered observations want the rows each commit changed (live results).
    private let rowWatchers = AtomicWord()
    /// How many commits of the writer were reported (while anything was observed): an
    /// observation whose fetch began reading a table it did not read before asks whether a
    /// commit landed meanwhile (``record(tables:for:fetchStartedAt:)``).
    private var commitSequence = 0
    /// The files the monitor watches (none in memory: no other connection can commit there).
    private let watchedPaths: [String]
    /// The writer's gate, through which the monitor looks at `data_version`.
    private let gate: WriterGate

    init(watchedPaths: [String], gate: WriterGate) {
        self.watchedPaths = watchedPaths
        self.gate = gate
    }

    var isObserving: Bool { observing.isSet }

    var wantsRowChanges: Bool { rowWatchers.value > 0 }

    /// The tables of the observations that want rows, counted, and as a set (under `lock`).
    private var rowTableCounts: [String: Int] = [:] {
        didSet {
            let tables = Set(rowTableCounts.keys)
            if tables != rowTableSet {
                rowTableSet = tables
                rowTableGeneration.add(1)
            }
        }
    }
    private var rowTableSet: Set<String> = []
    /// Changes whenever `rowTables` does (read without the lock).
    private let rowTableGeneration = AtomicWord()

    var rowTables: (tables: Set<String>, generation: Int) {
        lock.withLock { (rowTableSet, rowTableGeneration.value) }
    }

    var rowTablesGeneration: Int { rowTableGeneration.value }

    /// Opens a monitor of other connections' commits, or nil when none can happen (in memory).
    private func makeMonitor(_ onChange: @escaping @Sendable () -> Void) -> ChangeMonitor? {
        guard !watchedPaths.isEmpty else { return nil }
        let gate = gate
        let watch = gate.startWatching(onChange: onChange)
        return ChangeMonitor(paths: watchedPaths, look: { gate.look(watch) }, onChange: onChange,
                             onStop: { gate.stopWatching(watch) })
    }

    /// The current commit sequence: taken before a fetch begins (see
    /// ``record(tables:for:fetchStartedAt:)``).
    var currentCommitSequence: Int { lock.withLock { commitSequence } }

    /// How many observations are registered (tests).
    var count: Int { lock.withLock { entries.count } }

    /// Whether the monitor of other connections runs (tests).
    var isMonitoring: Bool { lock.withLock { monitor != nil } }

    /// How many times the monitor woke up to do anything (tests).
    var monitorActivityCount: Int? { lock.withLock { monitor }?.activityCount }

    /// Registers an observation; false when the database is closed.
    func add(_ entry: any ObservationEntry) -> Bool {
        let start: Bool = lock.withLock {
            guard !closed else { return false }
            if entries.updateValue(Registration(entry: entry, tables: nil), forKey: ObjectIdentifier(entry)) == nil {
                unknownTables += 1
                generation += 1
                if entry.wantsRowChanges {
                    rowTableCounts[entry.rowTable, default: 0] += 1
                    rowWatchers.add(1)
                }
            }
            observing.set()
            if monitor == nil {
                let link = MonitorLink(self)
                monitor = makeMonitor { link.changed() }
                if monitor != nil { self.link = link } else { link.cut() }
            }
            return true
        }
        return start
    }

    /// Forgets an observation; the monitor stops with the last one.
    func remove(_ entry: any ObservationEntry) {
        let stopped: (ChangeMonitor, MonitorLink?)? = lock.withLock {
            guard let registration = entries.removeValue(forKey: ObjectIdentifier(entry)) else { return nil }
            if entry.wantsRowChanges {
                if let count = rowTableCounts[entry.rowTable], count > 1 {
                    rowTableCounts[entry.rowTable] = count - 1
                } else {
                    rowTableCounts[entry.rowTable] = nil
                }
                rowWatchers.add(-1)
            }
            forget(registration.tables)
            guard entries.isEmpty else { return nil }
            observing.clear()
            defer {
                monitor = nil
                link = nil
            }
            return monitor.map { ($0, link) }
        }
        stopped?.1?.cut()
        stopped?.0.stop()
    }

    /// An observation's fetch read `tables`: later commits concern it when they write one.
    ///
    /// Returns true when the fetch may have missed a commit: it read a table its previous
    /// fetch did not (the first parent row of an `including`, the first link of a
    /// many-to-many), and a commit was reported after the fetch began (`fetchStartedAt`, from
    /// ``currentCommitSequence``). Such a commit was routed by the tables registered then,
    /// without that table, so it did not concern the observation — and the fetch's snapshot
    /// may predate it. The observation then fetches again.
    func record(tables: Set<String>, for entry: any ObservationEntry, fetchStartedAt sequence: Int) -> Bool {
        lock.withLock {
            guard var registration = entries[ObjectIdentifier(entry)] else { return false }
            let grew = registration.tables.map { !tables.isSubset(of: $0) } ?? false
            forget(registration.tables)
            for table in tables { tableCounts[table, default: 0] += 1 }
            generation += 1
            registration.tables = tables
            entries[ObjectIdentifier(entry)] = registration
            return grew && commitSequence != sequence
        }
    }

    /// Takes a registration's tables out of the counts (under `lock`).
    private func forget(_ tables: Set<String>?) {
        generation += 1
        guard let tables else {
            unknownTables -= 1
            return
        }
        for table in tables {
            if let count = tableCounts[table], count > 1 { tableCounts[table] = count - 1 } else { tableCounts[table] = nil }
        }
    }

    /// The writer committed: observations that read one of the changed tables (or have not
    /// fetched yet) fetch again.
    ///
    /// A commit that changed the schema (a table, view, index or trigger created, altered or
    /// dropped) makes every observation fetch again, emitting only if its result changed:
    /// what its reads read may have changed with it (a view redefined over another table),
    /// and the fetch learns it (statements that SQLite re-compiles learn their tables again,
    /// see ``Connection/automaticRecompiles``).
    func committed(_ statements: [StatementInfo], rows: CommittedRows?) {
        if statements.contains(where: \.changesSchema) {
            schemaChanged(statements)
            return
        }
        let concerned: [any ObservationEntry] = lock.withLock {
            commitSequence &+= 1
            var touchesObserved = unknownTables > 0
            if !touchesObserved {
                if statements.count == 1, let info = lastInfo, info === statements[0], lastInfoGeneration == generation {
                    touchesObserved = lastInfoTouches
                } else {
                    search: for info in statements {
                        for table in info.writtenTables where tableCounts[table] != nil {
                            touchesObserved = true
                            break search
                        }
                    }
                    if statements.count == 1 {
                        lastInfo = statements[0]
                        lastInfoTouches = touchesObserved
                        lastInfoGeneration = generation
                    }
                }
            }
            guard touchesObserved else { return [] }
            var changed = Set<String>()
            for info in statements { changed.formUnion(info.writtenTables) }
            return entries.values.compactMap { registration in
                guard let tables = registration.tables else { return registration.entry }
                return tables.isDisjoint(with: changed) ? nil : registration.entry
            }
        }
        // Told on the committing thread: a hop to a thread of the center's would spare the
        // committing call about 0.05 ms with 10 live results on its table, and cost each
        // element about 0.1 ms (measured with the benchmark's live-changes and live-commit-cost).
        for entry in concerned { entry.tablesChanged(rows) }
    }

    /// A commit that changed the schema: observations that read a table whose rows changed
    /// fetch again and emit; every other one fetches again and emits only if its result changed.
    private func schemaChanged(_ statements: [StatementInfo]) {
        var rowsChanged = Set<String>()
        for info in statements where !info.changesSchema { rowsChanged.formUnion(info.writtenTables) }
        let registrations = lock.withLock {
            commitSequence &+= 1
            return Array(entries.values)
        }
        for registration in registrations {
            if registration.tables.map({ !$0.isDisjoint(with: rowsChanged) }) ?? true {
                registration.entry.tablesChanged(nil)
            } else {
                registration.entry.externalChange()
            }
        }
    }

    /// Another connection or process committed: every observation fetches again (it emits
    /// only if its result changed, since the tables are unknown).
    func externalChange() {
        for registration in lock.withLock({ Array(entries.values) }) {
            registration.entry.externalChange()
        }
    }

    /// The database closed: every observation ends with ``ActiveObjectError/databaseClosed``.
    func close() {
        let (all, stopped, cut): ([any ObservationEntry], ChangeMonitor?, MonitorLink?) = lock.withLock {
            closed = true
            observing.clear()
            rowWatchers.store(0)
            rowTableCounts.removeAll()
            defer {
                entries.removeAll()
                tableCounts.removeAll()
                unknownTables = 0
                generation += 1
                lastInfo = nil
                monitor = nil
                link = nil
            }
            return (entries.values.map(\.entry), monitor, link)
        }
        cut?.cut()
        stopped?.stop()
        for entry in all { entry.end(throwing: ActiveObjectError.databaseClosed) }
    }
}

/// How the change monitor calls the center: holds it strongly (no weak reference to the
/// center, see ``ObservationCenter``) until the monitor stops, which breaks the cycle
/// center → monitor → link → center.
final class MonitorLink: @unchecked Sendable {
    // Safety of @unchecked Sendable: `center` is guarded by `lock`.
    private let lock = NSLock()
    private var center: ObservationCenter?

    init(_ center: ObservationCenter) { self.center = center }

    /// Another connection committed.
    func changed() { lock.withLock { center }?.externalChange() }

    /// The monitor stops: calls from now on do nothing.
    func cut() { lock.withLock { center = nil } }
}

/// One running observation, as the center sees it.
protocol ObservationEntry: AnyObject, Sendable {
    /// Whether it wants the rows each commit changed (``CommittedRows``); fixed for its life.
    var wantsRowChanges: Bool { get }
    /// The table whose rows it wants (lowercased), when it wants rows.
    var rowTable: String { get }
    /// A commit of this database wrote a table the last fetch read; `rows` are the rows it
    /// changed, nil when unknown (or not wanted).
    func tablesChanged(_ rows: CommittedRows?)
    func externalChange()
    func end(throwing error: Error)
}
